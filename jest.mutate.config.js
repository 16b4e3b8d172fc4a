/**
 * The jest configuration of `npm run mutate` (stryker.config.mjs): the suite of `npm test` without
 * what cannot see a planted bug in the TypeScript sources or costs minutes per run for nothing:
 * - pages driven in Chromium (test/e2e/, *-browser tests: the rules they guard have HTTP-level
 *   tests; a browser per mutant is minutes, and the point of the score is that rules need no browser);
 * - the package, example-server and CLI tests that run the built `dist/` (Stryker mutates the
 *   sources, not the build) and the benchmark's command counts;
 * - the check of the TSDoc of public exports, which reads the sources as text;
 * - the store adapters' own tests (the adapters are not mutated; the Redis Cluster's timing on a
 *   CPU shared with Stryker's other processes failed whole runs).
 */
import base from './jest.config.js';
import { areas } from './stryker.config.mjs';

const area = process.env.MUTATE_AREA === undefined ? undefined : areas[process.env.MUTATE_AREA];
const tests = process.env.MUTATE_TESTS ? process.env.MUTATE_TESTS.split(',') : area?.tests;

// Read by test/support/adapter-stores.ts: the store tests leave the Redis Cluster out (see there).
// Stryker runs jest in band in its runner process, so the tests see it.
process.env.TALENT_AUTH_MUTATION = '1';

export default {
  ...base,
  testPathIgnorePatterns: [
    '/node_modules/',
    '-browser\\.test\\.ts$',
    '/test/e2e/',
    '/test/factors/passkeys\\.test\\.ts$',
    '/test/package/',
    '/test/example/',
    '/test/performance/',
    '/test/adapters/',
    // Reads the sources' TSDoc, which Stryker's instrumented copies do not keep in place.
    '/test/public-api-docs\\.test\\.ts$',
  ],
  // The tests of the area being mutated (MUTATE_AREA, stryker.config.mjs), or MUTATE_TESTS
  // (folders or files, comma-separated); the whole suite otherwise.
  ...(tests ? { testMatch: tests.map((entry) => (entry.endsWith('.test.ts') ? `<rootDir>/${entry}` : `<rootDir>/${entry}/**/*.test.ts`)) } : {}),
  // Stryker runs one jest per worker, each in band.
  maxWorkers: 1,
};
