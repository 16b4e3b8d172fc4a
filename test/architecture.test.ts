import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * THE LAYERS (README, "Architecture"): what may import what. A module imports its own layer or
 * the layers below it, never one above; and no import chain comes back to where it started.
 * Type-only imports count too: a type is part of what a module knows.
 */
const LAYERS: ReadonlyArray<readonly [layer: string, folders: readonly string[]]> = [
  ['rules and stores', ['policies', 'adapters']],
  ['foundations', ['src/logger.ts', 'src/accounts.ts', 'src/option-kinds.ts', 'src/observability', 'src/i18n', 'src/resource-server']],
  ['records, audit trail, pages, factors', ['src/audit', 'src/records', 'src/pages', 'src/factors']],
  ['the engine', ['src/engine']],
  ['grants, limits, HTTP plumbing, federation', ['src/grants', 'src/limits', 'src/http', 'src/federation']],
  ['endpoints', ['src/endpoints']],
  ['the portal', ['src/portal']],
  ['composition', ['src/options.ts', 'src/options-reference.ts', 'src/compose', 'src/server.ts', 'src/index.ts', 'src/cli']],
];

const ROOT = process.cwd();

function sources(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function layerOf(file: string): number {
  const index = LAYERS.findIndex(([, folders]) => folders.some((folder) => file === folder || file.startsWith(`${folder}/`)));
  if (index === -1) throw new Error(`${file} is in no layer: give its folder one (test/architecture.test.ts, README)`);
  return index;
}

const IMPORT = /^(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'|^import\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/gms;

/** Every module's relative imports, as repository paths. */
function graph(): Map<string, string[]> {
  const files = ['policies', 'adapters', 'src'].flatMap(sources);
  return new Map(files.map((file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((match) => normalize(join(dirname(file), match[1] ?? match[2] ?? match[3]!)).replace(/\.js$/, '.ts'));
    return [file, targets.filter((target) => target.endsWith('.ts'))];
  }));
}

/** Every import of `imports` that points to a layer above its module's. */
function upwardImports(imports: ReadonlyMap<string, readonly string[]>): string[] {
  return [...imports].flatMap(([file, targets]) => targets
    .filter((target) => imports.has(target) && layerOf(target) > layerOf(file))
    .map((target) => `${file} (${LAYERS[layerOf(file)]![0]}) imports ${target} (${LAYERS[layerOf(target)]![0]})`));
}

/** Every import chain of `imports` that comes back to where it started. */
function importCycles(imports: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const walk = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const target of imports.get(file) ?? []) if (imports.has(target)) walk(target, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of imports.keys()) walk(file, []);
  return cycles;
}

describe('the layers (what may import what)', () => {
  const imports = graph();

  it('every module is in a layer', () => {
    for (const file of imports.keys()) expect(() => layerOf(file)).not.toThrow();
  });

  it('no module imports from a layer above its own', () => {
    expect(upwardImports(imports)).toEqual([]);
  });

  it('no import cycle', () => {
    expect(importCycles(imports)).toEqual([]);
  });

  it('the checks find what they are for: an upward import, a cycle (imports of every form read)', () => {
    const planted = new Map<string, string[]>([
      ['policies/scopes.ts', ['src/server.ts']],
      ['src/server.ts', []],
      ['src/engine/patches.ts', ['src/engine/single-use.ts']],
      ['src/engine/single-use.ts', ['src/engine/patches.ts']],
    ]);
    expect(upwardImports(planted)).toEqual(['policies/scopes.ts (rules and stores) imports src/server.ts (composition)']);
    expect(importCycles(planted)).toEqual(['src/engine/patches.ts -> src/engine/single-use.ts -> src/engine/patches.ts']);
    const forms = [...`import a from './a.js';\nimport type { B } from './b.js';\nexport { c } from './c.js';\nimport './d.js';\nconst e = await import('./e.js');`.matchAll(IMPORT)];
    expect(forms.map((match) => match[1] ?? match[2] ?? match[3])).toEqual(['./a.js', './b.js', './c.js', './d.js', './e.js']);
  });
});
