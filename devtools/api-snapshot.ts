/*
 * The public API's declared types, as one text: what `npm test` compares with the committed
 * snapshot (api/talent-auth.api.d.ts) and what `npm run api:update` writes there.
 *
 * The text is made from the built declarations (dist/**.d.ts) of every entry point of
 * package.json "exports": each entry's exported names, then the declaration of every symbol a host
 * can reach through them (the exports, and the types of this package their declarations name,
 * followed to the end), comments removed, sorted by name. So a change in a TSDoc comment or in a
 * module's internals is not an API change, and a change in an option's type, a function's
 * parameters or an exported name is. Types of the dependencies are named, never expanded: their
 * changes come with a dependency update, which the CHANGELOG records on its own.
 *
 * The snapshot's header ties it to CHANGELOG.md: it records a digest of the CHANGELOG's
 * "Unreleased" section as it was when the snapshot was last written, and `api:update` writes a
 * changed API only when that section has an entry and has changed since (so every API change goes
 * with words for the users).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Where the snapshot lives, from the repository's root. */
export const SNAPSHOT_PATH = 'api/talent-auth.api.d.ts';

/** The advice every refusal gives, in the words docs/versioning.md uses. */
export const API_ADVICE =
  'add an entry under "## [Unreleased]" in CHANGELOG.md saying what changed for users, then run `npm run api:update` '
  + '(docs/versioning.md, "The public API check")';

/** The entry points of package.json "exports" with types: the import specifier and its .d.ts, from the root. */
export function entryPoints(root: string): Array<{ specifier: string; types: string }> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  return Object.entries(manifest.exports).flatMap(([subpath, target]) => {
    const types = typeof target === 'object' && target !== null ? (target as { types?: unknown }).types : undefined;
    if (typeof types !== 'string') return [];
    return [{ specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.replace(/^\.\//, '')}`, types }];
  });
}

/**
 * Names in the order of their letters, case aside, then by code point: the same on every Node
 * version (a locale's collation may change with Node's ICU, and the snapshot must not).
 */
function byName(a: string, b: string): number {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The top-level statement a declaration belongs to (a variable's whole statement), or undefined for a member. */
function topLevel(declaration: ts.Declaration): ts.Statement | undefined {
  let node: ts.Node = declaration;
  if (ts.isVariableDeclaration(node) && ts.isVariableDeclarationList(node.parent)) node = node.parent.parent;
  return ts.isSourceFile(node.parent) ? (node as ts.Statement) : undefined;
}

const isPrivate = (member: ts.ClassElement): boolean =>
  (member.name !== undefined && ts.isPrivateIdentifier(member.name))
  || (ts.canHaveModifiers(member) && (ts.getModifiers(member) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword));

/**
 * What of a statement is API: all of it, except a class's private members (a host cannot reach
 * them) and, for a class a host cannot construct (no entry exports it as a value), its constructor.
 */
function apiPart(statement: ts.Statement, constructible: boolean): ts.Statement {
  if (!ts.isClassDeclaration(statement)) return statement;
  const members = statement.members.filter((member) => !isPrivate(member) && (constructible || !ts.isConstructorDeclaration(member)));
  return ts.factory.updateClassDeclaration(statement, statement.modifiers, statement.name, statement.typeParameters, statement.heritageClauses, members);
}

/** Whether an export is a type only (`export type { X }` anywhere on its way), so a host cannot use it as a value. */
function typeOnly(checker: ts.TypeChecker, exported: ts.Symbol): boolean {
  let symbol: ts.Symbol | undefined = exported;
  while (symbol && symbol.flags & ts.SymbolFlags.Alias) {
    const declaration = symbol.declarations?.[0];
    if (declaration && ts.isTypeOnlyImportOrExportDeclaration(declaration)) return true;
    symbol = checker.getImmediateAliasedSymbol(symbol);
  }
  return !symbol || !(symbol.flags & ts.SymbolFlags.Value);
}

/**
 * The public API of the package built at `root` (its dist/), as the snapshot's body: each entry's
 * exports, then every reachable declaration. Throws when an entry's declarations are missing (not
 * built).
 */
export function publicApi(root: string): string {
  const entries = entryPoints(root);
  for (const entry of entries) {
    if (!existsSync(join(root, entry.types))) throw new Error(`${entry.types} is missing: run \`npm run build\` first`);
  }
  // Only the package's own declarations are read: the standard library's and the dependencies'
  // types are named, never expanded, so they need not be parsed (which would take seconds).
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    noLib: true, noEmit: true, types: [],
  };
  const host = ts.createCompilerHost(options);
  host.resolveModuleNameLiterals = (literals, containingFile, _reference, settings) => literals.map((literal) => (literal.text.startsWith('.')
    ? ts.resolveModuleName(literal.text, containingFile, settings, host)
    : { resolvedModule: undefined }));
  const program = ts.createProgram(entries.map((entry) => join(root, entry.types)), options, host);
  const checker = program.getTypeChecker();
  const ours = (file: ts.SourceFile) => !file.fileName.includes('/node_modules/') && resolve(file.fileName).startsWith(resolve(root));
  const resolveAlias = (symbol: ts.Symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);

  const sections: string[] = [];
  const exported: ts.Symbol[] = [];
  const values = new Set<ts.Symbol>();
  for (const entry of entries) {
    const source = program.getSourceFile(join(root, entry.types))!;
    const names = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).map((symbol) => {
      exported.push(symbol);
      const asType = typeOnly(checker, symbol);
      if (!asType) values.add(resolveAlias(symbol));
      return { name: symbol.getName(), text: `${asType ? 'type ' : ''}${symbol.getName()}` };
    }).sort((a, b) => byName(a.name, b.name));
    sections.push(`declare module '${entry.specifier}' {\n${names.map(({ text }) => `  export { ${text} };`).join('\n')}\n}`);
  }

  // The API part of each statement that declares a reached symbol; names may repeat across modules.
  const statements = new Map<ts.Symbol, { file: ts.SourceFile; parts: ts.Statement[] }>();
  const queue: ts.Symbol[] = [];
  const reach = (symbol: ts.Symbol) => {
    const target = resolveAlias(symbol);
    if (statements.has(target)) return;
    const declared = [...new Set((target.declarations ?? [])
      .filter((declaration) => ours(declaration.getSourceFile()))
      .map(topLevel)
      .filter((statement): statement is ts.Statement => statement !== undefined))];
    if (declared.length === 0) return;
    statements.set(target, { file: declared[0]!.getSourceFile(), parts: declared.map((statement) => apiPart(statement, values.has(target))) });
    queue.push(target);
  };
  exported.forEach(reach);
  // Every symbol of ours that a reached declaration names, followed to the end (the parts kept
  // are nodes of the parsed file, so the compiler still resolves their names).
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && node.pos >= 0) {
      const named = checker.getSymbolAtLocation(node);
      if (named) reach(named);
    }
    ts.forEachChild(node, visit);
  };
  for (let symbol = queue.shift(); symbol; symbol = queue.shift()) statements.get(symbol)!.parts.forEach(visit);

  const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
  const printed = [...statements].map(([symbol, { file, parts }]) => {
    const text = parts
      .map((statement) => printer.printNode(ts.EmitHint.Unspecified, statement, file))
      // Inferred types name other modules by relative path: say which module, from the package's root.
      .map((code) => code.replace(/import\("(\.{1,2}\/[^"]+)"\)/g, (_all, path: string) => `import("./${relative(join(root, 'dist'), resolve(dirname(file.fileName), path))}")`))
      .join('\n');
    return { name: symbol.getName(), text };
  });
  // Two modules may declare the same name: both are printed, in a stable order.
  printed.sort((a, b) => byName(a.name, b.name) || byName(a.text, b.text));
  return `${sections.join('\n\n')}\n\n${printed.map(({ text }) => text).join('\n\n')}\n`;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The text of CHANGELOG.md's "Unreleased" section (its heading excluded), or undefined when it has none. */
export function unreleasedSection(changelog: string): string | undefined {
  const lines = changelog.split('\n');
  const start = lines.findIndex((line) => /^## \[Unreleased\]/.test(line));
  if (start === -1) return undefined;
  const end = lines.findIndex((line, index) => index > start && /^## /.test(line));
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n').trim();
}

/** Whether a section of the CHANGELOG has at least one entry (a list item). */
const hasEntry = (section: string): boolean => /^[-*] \S/m.test(section);

const HEADER = [
  '// The public API of talent-auth: the declared types of every entry point of package.json "exports",',
  '// comments and private members left out. Written by `npm run api:update`, which needs a new entry',
  '// under "## [Unreleased]" in CHANGELOG.md for a changed API; `npm test` fails when the built',
  '// declarations differ from this file (docs/versioning.md, "The public API check"). Not edited by hand.',
];
const DIGEST_LINE = /^\/\/ changelog-unreleased-sha256: ([0-9a-f]{64})$/m;

/** The snapshot file: its header (with the digest of the Unreleased section it was written with), a blank line, the API. */
function snapshotText(api: string, unreleasedDigest: string): string {
  return [...HEADER, `// changelog-unreleased-sha256: ${unreleasedDigest}`, '', api].join('\n');
}

/** The API of a snapshot file's text, the line it starts at, and the recorded digest. */
function parseSnapshot(text: string): { api: string; firstLine: number; unreleasedDigest: string | undefined } {
  const lines = text.split('\n');
  const blank = lines.findIndex((line) => !line.startsWith('//'));
  return { api: lines.slice(blank + 1).join('\n'), firstLine: blank + 2, unreleasedDigest: DIGEST_LINE.exec(text)?.[1] };
}

/** What the check or the update found: all well, or why not. */
export type ApiResult = { ok: true; written?: boolean } | { ok: false; message: string };

/**
 * `npm test`'s check: the package built at `root` declares the API its snapshot records. A
 * difference names the snapshot's first changed line and gives the advice.
 */
export function checkApi(root: string): ApiResult {
  const path = join(root, SNAPSHOT_PATH);
  if (!existsSync(path)) return { ok: false, message: `${SNAPSHOT_PATH} is missing: ${API_ADVICE}` };
  const recorded = parseSnapshot(readFileSync(path, 'utf8'));
  const built = publicApi(root);
  if (built === recorded.api) return { ok: true };
  const was = recorded.api.split('\n');
  const now = built.split('\n');
  const at = now.findIndex((line, index) => line !== was[index]);
  const line = at === -1 ? now.length : at;
  return {
    ok: false,
    message: `the public API's declared types changed (${SNAPSHOT_PATH} line ${recorded.firstLine + line} was ${JSON.stringify(was[line] ?? '(the end)')}, `
      + `the build declares ${JSON.stringify(now[line] ?? '(the end)')}): ${API_ADVICE}`,
  };
}

/**
 * `npm run api:update`: writes the snapshot of the package built at `root`. An unchanged API is
 * left as it is; a changed one is written only when CHANGELOG.md's Unreleased section has an
 * entry and has changed since the snapshot was last written.
 */
export function updateApi(root: string): ApiResult {
  const path = join(root, SNAPSHOT_PATH);
  const previous = existsSync(path) ? parseSnapshot(readFileSync(path, 'utf8')) : undefined;
  const built = publicApi(root);
  if (previous?.api === built) return { ok: true, written: false };
  const changelog = join(root, 'CHANGELOG.md');
  const unreleased = existsSync(changelog) ? unreleasedSection(readFileSync(changelog, 'utf8')) : undefined;
  if (unreleased === undefined) {
    return { ok: false, message: 'CHANGELOG.md has no "## [Unreleased]" section: add one, with an entry saying what changed for users' };
  }
  const digest = sha256(unreleased);
  if (!hasEntry(unreleased) || previous?.unreleasedDigest === digest) {
    return {
      ok: false,
      message: `the public API changed, and the "## [Unreleased]" section of CHANGELOG.md has no new entry since ${SNAPSHOT_PATH} `
        + 'was last written: add one saying what changed for users, then run `npm run api:update` again',
    };
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, snapshotText(built, digest));
  return { ok: true, written: true };
}

// `node dist/devtools/api-snapshot.js [update]`, from anywhere: checks (or updates) the repository's snapshot.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const update = process.argv[2] === 'update';
  const result = update ? updateApi(root) : checkApi(root);
  if (!result.ok) console.error(`api: ${result.message}`);
  else if (update) console.log(result.written ? `api: ${SNAPSHOT_PATH} written` : `api: ${SNAPSHOT_PATH} is up to date`);
  process.exitCode = result.ok ? 0 : 1;
}
