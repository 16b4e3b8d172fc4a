// The linter of `npm test` (typescript-eslint): the recommended rules of ESLint and typescript-eslint
// on every TypeScript file of the project, and the habits the project keeps (see the rules below).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // api/: the public API's snapshot (devtools/api-snapshot.ts), generated; reports/ and .stryker-tmp/: npm run mutate.
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'docs/**', 'api/**', 'reports/**', '.stryker-tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_name`: a parameter or binding that must be there and is not read; `...rest` leaves its siblings out on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
      // French typography puts narrow no-break spaces before `:` and `?` in the pages' texts.
      'no-irregular-whitespace': ['error', { skipStrings: true, skipTemplates: true }],
      // Type-only imports say so: nothing is loaded for them.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Node scripts: the compiler knows Node's globals; the linter need not guess them.
    files: ['**/*.mjs', '**/*.js'],
    rules: { 'no-undef': 'off' },
  },
  {
    // Tests and tools may print, and may type loosely what they build on purpose.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'devtools/**/*.ts', 'examples/**/*.ts', 'bin/**/*.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
