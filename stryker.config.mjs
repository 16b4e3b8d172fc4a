// `npm run mutate`: mutation testing of the modules that hold security rules (docs/mutation-testing.md).
// Stryker plants one small bug at a time (a flipped condition, a removed call, an emptied list) in
// these files and runs the tests that cover the line; a bug no test notices is a surviving mutant.

/** The modules that hold security rules: docs/mutation-testing.md lists them with their score. */
export const securityModules = [
  'policies/**/*.ts',
  'src/grants/**/*.ts',
  'src/engine/single-use.ts',
  'src/engine/live-tokens.ts',
  'src/resource-server/**/*.ts',
  'src/limits/**/*.ts',
  'src/http/csrf.ts',
  'src/portal/sessions.ts',
  'src/portal/session-cookies.ts',
  'src/portal/security.ts',
  'src/portal/reauth.ts',
  'src/endpoints/tenant-guard.ts',
  'src/endpoints/management/management-api.ts',
  'src/endpoints/consents/consent-api.ts',
  'src/http/named-user-caller.ts',
  'src/factors/totp.ts',
  'src/factors/recovery-codes.ts',
  'src/endpoints/lifecycle/client-assertion.ts',
  'src/federation/upstreams.ts',
];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  testRunnerNodeArgs: ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning'],
  jest: { projectType: 'custom', configFile: 'jest.mutate.config.js', enableFindRelatedTests: false },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  coverageAnalysis: 'perTest',
  mutate: securityModules,
  ignorePatterns: ['reports', 'coverage', 'bench/.out', '.redis-test'],
  incremental: true,
  incrementalFile: 'reports/mutation/incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/report.json' },
  thresholds: { high: 95, low: 90, break: 90 },
  // A mutant in code that runs when a module loads (a table, a pattern) can only be tested by the
  // whole suite in a fresh process: minutes each on this machine. They are counted as ignored and
  // listed in docs/mutation-testing.md; the rules they hold have table tests of their own.
  ignoreStatic: true,
  // Two test runners and the type checker, which idles once the mutants are checked.
  concurrency: 3,
  // The first run goes through every test once, in band, to learn which tests cover which mutant.
  dryRunTimeoutMinutes: 45,
  // A mutant that makes a request hang is stopped this long after its tests' usual time (times
  // 1.5). At 15 s, hangs took most of the time of a run.
  timeoutMS: 5000,
  disableTypeChecks: '{test,src,policies,adapters}/**/*.ts',
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
