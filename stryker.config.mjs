// `npm run mutate`: mutation testing of the modules that hold security rules (docs/mutation-testing.md).
// Stryker plants one small bug at a time (a flipped condition, a removed call, an emptied list) in
// these files and runs the tests that cover the line; a bug no test notices is a surviving mutant.

/**
 * The modules that hold security rules, by area, each with the tests that guard it. A mutant is
 * run against its area's tests only: Stryker's jest runner picks a mutant's tests by name, so every
 * test file of the run is loaded for every mutant (each loads the whole server: about 80 s for the
 * whole suite on this machine, per mutant). An area's tests are its unit and table tests and the
 * HTTP tests of its endpoints; a mutant they miss counts as surviving even if a test elsewhere
 * would catch it (the score is a floor). docs/mutation-testing.md lists the areas and their scores.
 */
export const areas = {
  // The policies' own tables (2 s for all). More than half of their mutants are static (tables and
  // schemas built when a module loads) and each of those runs every test of the area: with the
  // records' and the high-security flow's tests too, that was 41 s a mutant, 14 hours in all.
  // The option reference (1 s) holds the options' words, defaults and bounds that the policies'
  // schemas state (docs/configuration.md is generated from them).
  policies: { mutate: ['policies/**/*.ts'], tests: ['test/policies', 'test/options-reference.test.ts'] },
  grants: {
    mutate: ['src/grants/**/*.ts'],
    // The named-user grants' hooks run in a code flow: the flow, its attacks (codes, refresh
    // tokens), and the management right that a sign-in without a second factor does not give. A
    // code exchange refused after the engine took the code (another DPoP key than the code's)
    // spends it: the pushed-authorization tests bind codes to a key.
    tests: ['test/grants', 'test/endpoints/token', 'test/endpoints/sign-in/named-user-flow.test.ts', 'test/endpoints/sign-in/enrolment.test.ts', 'test/adversarial/codes.test.ts', 'test/adversarial/refresh.test.ts', 'test/dpop/pushed-authorization.test.ts'],
  },
  'single-use': { mutate: ['src/engine/single-use.ts', 'src/engine/live-tokens.ts'], tests: ['test/engine'] },
  'resource-server': { mutate: ['src/resource-server/**/*.ts'], tests: ['test/resource-server', 'test/dpop'] },
  limits: {
    mutate: ['src/limits/**/*.ts'],
    // The browser endpoints' limits (authorize, sign-out) and the sign-in throttle over HTTP are
    // tested as attacks: test/adversarial.
    tests: ['test/limits', 'test/adversarial/authorize-requests.test.ts', 'test/adversarial/sign-out-requests.test.ts', 'test/adversarial/sign-in.test.ts', 'test/audit/refusal-floods.test.ts'],
  },
  portal: {
    mutate: ['src/http/csrf.ts', 'src/portal/sessions.ts', 'src/portal/session-cookies.ts', 'src/portal/security.ts', 'src/portal/reauth.ts'],
    tests: ['test/portal', 'test/http/csrf.test.ts'],
  },
  'api-guards': {
    mutate: ['src/endpoints/tenant-guard.ts', 'src/endpoints/management/management-api.ts', 'src/endpoints/consents/consent-api.ts', 'src/http/named-user-caller.ts'],
    tests: ['test/endpoints/management', 'test/endpoints/consents', 'test/http/named-user-caller.test.ts', 'test/audit/audit-trail.test.ts'],
  },
  // Passkeys' ceremonies with an authenticator made in Node (test/factors/passkeys-ceremonies.test.ts);
  // the Chromium tests of test/factors/passkeys.test.ts are left out (jest.mutate.config.js).
  factors: { mutate: ['src/factors/totp.ts', 'src/factors/recovery-codes.ts', 'src/factors/passkeys.ts'], tests: ['test/factors'] },
  'client-assertion': { mutate: ['src/endpoints/lifecycle/client-assertion.ts'], tests: ['test/endpoints/token/private-key-jwt.test.ts', 'test/endpoints/token/malformed-assertions.test.ts', 'test/high-security/flow.test.ts', 'test/endpoints/lifecycle'] },
  federation: { mutate: ['src/federation/upstreams.ts'], tests: ['test/federation'] },
};

/** Every module of the score, all areas together. */
export const securityModules = Object.values(areas).flatMap((area) => area.mutate);

/** The area of this run (MUTATE_AREA, set by scripts/mutate.sh), or undefined for all at once. */
const areaName = process.env.MUTATE_AREA;
const area = areaName === undefined ? undefined : areas[areaName];
if (areaName !== undefined && !area) throw new Error(`MUTATE_AREA=${areaName}: not an area of stryker.config.mjs (${Object.keys(areas).join(', ')})`);
const reportsOf = areaName === undefined ? 'reports/mutation' : `reports/mutation/${areaName}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  testRunnerNodeArgs: ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning'],
  jest: { projectType: 'custom', configFile: 'jest.mutate.config.js', enableFindRelatedTests: false },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  coverageAnalysis: 'perTest',
  mutate: area ? area.mutate : securityModules,
  ignorePatterns: ['reports', 'coverage', 'bench/.out', '.redis-test'],
  incremental: true,
  incrementalFile: `${reportsOf}/incremental.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `${reportsOf}/index.html` },
  jsonReporter: { fileName: `${reportsOf}/report.json` },
  thresholds: { high: 95, low: 90, break: 90 },
  // A mutant in code that runs while a server is built (a route's handlers, a table) is "static":
  // it runs all of the area's tests. With ignoreStatic on, one also run inside a test was tested
  // against that one test alone (Stryker's "hybrid" mutant): 28 of api-guards' survivors were that,
  // a route name or a route's methods that only the test building its own server had run.
  ignoreStatic: false,
  // One type checker and one test runner, then two test runners once the mutants are checked: on
  // 2 cores, a third process made the tests' own set-up slow enough to time out.
  concurrency: 2,
  // The first run goes through every test once, in band, to learn which tests cover which mutant.
  dryRunTimeoutMinutes: 45,
  // A mutant's tests are given their time in the first run (hooks, which start servers, not counted)
  // times 1.5, plus this margin. 5 s made most mutants "time out" that only set up slowly (counted
  // as detected, and each restarting a test runner); a real hang costs this long.
  timeoutMS: 60000,
  disableTypeChecks: '{test,src,policies,adapters}/**/*.ts',
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
