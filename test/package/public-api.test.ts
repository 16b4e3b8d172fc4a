import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_ADVICE, SNAPSHOT_PATH, checkApi, updateApi } from '../../devtools/api-snapshot.js';

/**
 * The public API check of `npm test`: the declared types of the package's entry points (built by
 * `npm run build`, which `npm test` runs first) are those of the committed snapshot, and a change
 * there goes with an entry under "Unreleased" in CHANGELOG.md (docs/versioning.md, "The public API
 * check"). The check itself is tested on packages made in a temporary directory: the real files
 * are only read.
 */

const repo = process.cwd();
const run = promisify(execFile);

/** The newest modification time of the .ts files under the folders. */
function newestSource(folders: string[]): number {
  const walk = (path: string): number => (statSync(path).isDirectory()
    ? Math.max(0, ...readdirSync(path).map((name) => walk(join(path, name))))
    : path.endsWith('.ts') ? statSync(path).mtimeMs : 0);
  return Math.max(...folders.map((folder) => walk(join(repo, folder))));
}

describe('the public API', () => {
  it(`declares what ${SNAPSHOT_PATH} records`, () => {
    // Run on its own after an edit, the test would read an old build: say so rather than compare it.
    const built = join(repo, 'dist/src/index.d.ts');
    if (!existsSync(built) || statSync(built).mtimeMs < newestSource(['src', 'adapters', 'policies'])) {
      throw new Error('dist/ is missing or older than the sources: run `npm run build` first');
    }
    const result = checkApi(repo);
    expect(result.ok ? 'unchanged' : result.message).toBe('unchanged');
  }, 60_000);

  it('is checked by the built script too (what `npm run api:update` runs, without `update`: it writes nothing)', async () => {
    const { stdout, stderr } = await run(process.execPath, [join(repo, 'dist/devtools/api-snapshot.js')], { cwd: tmpdir() });
    expect([stdout, stderr]).toEqual(['', '']);
  });
});

const CHANGELOG = (unreleased: string) => `# Changelog

## [Unreleased]
${unreleased}
## [0.1.0] - 2026-01-01

### Added

- The first release.
`;

/** A small package: two entries, a type of its own that an export names, one that none names. */
const PACKAGE: Record<string, string> = {
  'package.json': JSON.stringify({
    name: 'demo',
    exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' }, './kit': { types: './dist/kit.d.ts' }, './package.json': './package.json' },
  }),
  'dist/index.d.ts': `import type { Internal } from './internal.js';
/** What make() takes. */
export interface Options {
    name: string;
    inner?: Internal;
}
/** Makes one. */
export declare function make(options: Options): Made;
export declare class Made {
    private secret;
    constructor(options: Options);
    get name(): string;
}
export type { Kit } from './kit.js';
`,
  'dist/internal.d.ts': `export interface Internal {
    depth: number;
}
export interface Unreached {
    anything: string;
}
`,
  'dist/kit.d.ts': `export interface Kit {
    verify(token: string): boolean;
}
`,
  'CHANGELOG.md': CHANGELOG('\n### Added\n\n- The demo package.\n'),
};

describe('the public API check', () => {
  let root: string;
  const write = (path: string, text: string) => writeFileSync(join(root, path), text);
  const read = (path: string) => readFileSync(join(root, path), 'utf8');
  const edit = (path: string, from: string, to: string) => {
    const text = read(path);
    if (!text.includes(from)) throw new Error(`${path} has no ${from}`);
    write(path, text.replace(from, to));
  };
  const failure = () => {
    const result = checkApi(root);
    return result.ok ? 'passes' : result.message;
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'talent-auth-api-'));
    mkdirSync(join(root, 'dist'));
    for (const [path, text] of Object.entries(PACKAGE)) write(path, text);
    expect(updateApi(root)).toEqual({ ok: true, written: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('records each entry\'s exports and the declarations they reach, without comments, private members or unreached types', () => {
    const snapshot = read(SNAPSHOT_PATH);
    expect(snapshot).toContain(`declare module 'demo' {\n  export { type Kit };\n  export { Made };\n  export { make };\n  export { type Options };\n}`);
    expect(snapshot).toContain(`declare module 'demo/kit' {\n  export { type Kit };\n}`);
    expect(snapshot).toContain('export interface Internal {\n    depth: number;\n}');
    expect(snapshot).toContain('constructor(options: Options);');
    expect(snapshot).not.toMatch(/What make\(\) takes|secret|Unreached/);
    expect(snapshot).toMatch(/^\/\/ changelog-unreleased-sha256: [0-9a-f]{64}$/m);
    expect(failure()).toBe('passes');
    expect(updateApi(root)).toEqual({ ok: true, written: false });
  });

  it('passes when only comments, private members or unreached types change', () => {
    edit('dist/index.d.ts', '/** Makes one. */', '/** Makes one, better said. */');
    edit('dist/index.d.ts', 'private secret;', 'private hidden;');
    edit('dist/internal.d.ts', 'anything: string;', 'anything: number;');
    expect(failure()).toBe('passes');
  });

  it.each<[string, string, string, string]>([
    ['an option\'s type', 'dist/index.d.ts', 'name: string;', 'name: number;'],
    ['a type of its own that an export names', 'dist/internal.d.ts', 'depth: number;', 'depth: string;'],
    ['a parameter', 'dist/kit.d.ts', 'verify(token: string)', 'verify(token: string, now: number)'],
    ['an export removed', 'dist/index.d.ts', 'export type { Kit } from \'./kit.js\';\n', ''],
    ['a new export', 'dist/kit.d.ts', '}\n', '}\nexport declare const VERSION = 2;\n'],
  ])('fails when %s changes, saying where and what to do', (_change, path, from, to) => {
    edit(path, from, to);
    const message = failure();
    expect(message).toMatch(/^the public API's declared types changed \(api\/talent-auth\.api\.d\.ts line \d+ was ".*", the build declares ".*"\): add an entry/);
    expect(message).toContain('add an entry under "## [Unreleased]" in CHANGELOG.md saying what changed for users, then run `npm run api:update`');
    expect(message.endsWith(API_ADVICE)).toBe(true);
  });

  it('names the changed line of the snapshot', () => {
    edit('dist/index.d.ts', 'name: string;', 'name: number;');
    const line = read(SNAPSHOT_PATH).split('\n').indexOf('    name: string;') + 1;
    expect(failure()).toContain(`api/talent-auth.api.d.ts line ${line} was "    name: string;", the build declares "    name: number;"`);
  });

  it('api:update writes a changed API only with a new entry under Unreleased in the CHANGELOG', () => {
    edit('dist/index.d.ts', 'name: string;', 'name: number;');
    const before = read(SNAPSHOT_PATH);
    const refused = updateApi(root);
    expect(refused).toEqual({
      ok: false,
      message: 'the public API changed, and the "## [Unreleased]" section of CHANGELOG.md has no new entry since api/talent-auth.api.d.ts '
        + 'was last written: add one saying what changed for users, then run `npm run api:update` again',
    });
    expect(read(SNAPSHOT_PATH)).toBe(before);
    expect(failure()).not.toBe('passes');

    edit('CHANGELOG.md', '- The demo package.\n', '- The demo package.\n\n### Changed\n\n- `Options.name` is a number.\n');
    expect(updateApi(root)).toEqual({ ok: true, written: true });
    expect(failure()).toBe('passes');
  });

  it('api:update refuses a changed API while Unreleased is empty (just after a release), or missing', () => {
    write('CHANGELOG.md', CHANGELOG('\n'));
    edit('dist/kit.d.ts', 'verify(token: string)', 'verify(token: string, now: number)');
    expect(updateApi(root)).toMatchObject({ ok: false, message: expect.stringContaining('has no new entry') });
    write('CHANGELOG.md', '# Changelog\n\n## [0.1.0] - 2026-01-01\n\n- The first release.\n');
    expect(updateApi(root)).toEqual({ ok: false, message: 'CHANGELOG.md has no "## [Unreleased]" section: add one, with an entry saying what changed for users' });
  });

  it('fails, with the advice, when there is no snapshot', () => {
    rmSync(join(root, SNAPSHOT_PATH));
    expect(failure()).toBe(`${SNAPSHOT_PATH} is missing: ${API_ADVICE}`);
  });
});

describe('the public API check on a copy of this package', () => {
  let root: string;
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('fails when an option of createAuthServer() changes its type', () => {
    root = mkdtempSync(join(tmpdir(), 'talent-auth-api-copy-'));
    for (const path of ['package.json', 'api', 'dist/src', 'dist/adapters', 'dist/policies']) {
      cpSync(join(repo, path), join(root, path), { recursive: true, filter: (source) => statSync(source).isDirectory() || !source.endsWith('.js') });
    }
    const options = join(root, 'dist/src/options.d.ts');
    const text = readFileSync(options, 'utf8');
    expect(text).toContain('baseUrl: z.ZodPipe<z.ZodString,');
    writeFileSync(options, text.replace('baseUrl: z.ZodPipe<z.ZodString,', 'baseUrl: z.ZodPipe<z.ZodNumber,'));
    const result = checkApi(root);
    expect(result.ok ? 'passes' : result.message).toMatch(/line \d+ was " +baseUrl: z\.ZodPipe<z\.ZodString, .*", the build declares " +baseUrl: z\.ZodPipe<z\.ZodNumber, .*"/);
  }, 60_000);
});
