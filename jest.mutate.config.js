/**
 * The jest configuration of `npm run mutate` (stryker.config.mjs): the suite of `npm test` without
 * what cannot see a planted bug in the TypeScript sources or costs minutes per run for nothing:
 * - pages driven in Chromium (the rules they guard have HTTP-level tests; a browser per mutant is
 *   minutes, and the issue of the mutation score is precisely that rules need no browser);
 * - the package, example-server and CLI tests that run the built `dist/` (Stryker mutates the
 *   sources, not the build) and the benchmark's command counts;
 * - the check of the TSDoc of public exports, which reads the sources as text;
 * - the store adapters' own tests (the adapters are not mutated; the Redis Cluster's timing on a
 *   CPU shared with Stryker's other processes failed whole runs).
 */
import base from './jest.config.js';

// Read by test/support/adapter-stores.ts: the store tests leave the Redis Cluster out (see there).
// Stryker runs jest in band in its runner process, so the tests see it.
process.env.TALENT_AUTH_MUTATION = '1';

export default {
  ...base,
  testPathIgnorePatterns: [
    '/node_modules/',
    '-browser\\.test\\.ts$',
    '/test/e2e/portal\\.test\\.ts$',
    '/test/factors/passkeys\\.test\\.ts$',
    '/test/package/',
    '/test/example/',
    '/test/performance/',
    '/test/adapters/',
    // Reads the sources' TSDoc, which Stryker's instrumented copies do not keep in place.
    '/test/public-api-docs\\.test\\.ts$',
  ],
  // MUTATE_TESTS=test/policies: a quicker look at one area (its score counts only those tests).
  ...(process.env.MUTATE_TESTS ? { testMatch: process.env.MUTATE_TESTS.split(',').map((dir) => `<rootDir>/${dir}/**/*.test.ts`) } : {}),
  // Stryker runs one jest per worker, each in band.
  maxWorkers: 1,
};
