import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm run mutate` (stryker.config.mjs, docs/mutation-testing.md): the list of modules that hold
 * security rules stays true to the tree and to its documentation. A module renamed or moved
 * would otherwise drop out of the mutation score without anyone noticing.
 */
const ROOT = process.cwd();

function tsFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    const path = `${folder}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The files one entry of the list names: `folder/**\/*.ts` or one file. */
function filesOf(entry: string): string[] {
  const folder = /^(.+)\/\*\*\/\*\.ts$/.exec(entry)?.[1];
  if (folder !== undefined) return existsSync(join(ROOT, folder)) ? tsFiles(folder) : [];
  return existsSync(join(ROOT, entry)) ? [entry] : [];
}

describe('the modules of the mutation score', () => {
  let modules: string[] = [];
  let areas: Record<string, { mutate: string[]; tests: string[] }> = {};
  let config: { mutate?: unknown; ignoreStatic?: unknown; thresholds?: { break?: unknown } } = {};

  beforeAll(async () => {
    const loaded = (await import(join(ROOT, 'stryker.config.mjs'))) as { securityModules: string[]; areas: typeof areas; default: typeof config };
    modules = loaded.securityModules;
    areas = loaded.areas;
    config = loaded.default;
  });

  it('are grouped in areas, each module in one area, each area with tests that exist and are run by npm test', () => {
    const entries = Object.values(areas).flatMap((area) => area.mutate);
    expect(new Set(entries).size).toBe(entries.length);
    for (const [name, area] of Object.entries(areas)) {
      expect([name, area.mutate.length > 0, area.tests.length > 0]).toEqual([name, true, true]);
      for (const entry of area.tests) {
        const found = entry.endsWith('.test.ts') ? existsSync(join(ROOT, entry)) : existsSync(join(ROOT, entry)) && tsFiles(entry).some((file) => file.endsWith('.test.ts'));
        expect(found ? entry : `${entry} (area ${name}) holds no test`).toBe(entry);
      }
    }
  });

  it('each area is listed in docs/mutation-testing.md', () => {
    const docs = readFileSync(join(ROOT, 'docs/mutation-testing.md'), 'utf8');
    expect(Object.keys(areas).filter((name) => !docs.includes(`| \`${name}\` |`))).toEqual([]);
  });

  it('are what Stryker mutates, with the 90% floor', () => {
    expect(modules.length).toBeGreaterThan(10);
    expect(config.mutate).toEqual(modules);
    expect(config.thresholds?.break).toBe(90);
  });

  it('each name at least one file of the tree', () => {
    const empty = modules.filter((entry) => filesOf(entry).length === 0);
    expect(empty).toEqual([]);
  });

  it('are each listed in docs/mutation-testing.md', () => {
    const docs = readFileSync(join(ROOT, 'docs/mutation-testing.md'), 'utf8');
    const missing = modules.filter((entry) => !docs.includes(`\`${entry}\``));
    expect(missing).toEqual([]);
  });

  it('include the rules the issue of the score named', () => {
    const covered = new Set(modules.flatMap(filesOf));
    for (const file of [
      'policies/scopes.ts',
      'policies/pkce.ts',
      'src/engine/single-use.ts',
      'src/engine/live-tokens.ts',
      'src/resource-server/verifier.ts',
      'src/limits/sign-in.ts',
      'src/http/csrf.ts',
      'src/endpoints/management/management-api.ts',
      'src/endpoints/consents/consent-api.ts',
    ]) {
      expect(covered.has(file) ? file : `${file} is not mutated`).toBe(file);
    }
  });
});
