import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { z } from 'zod';
import { optionsSchema } from '../src/options.js';

/**
 * Every export of the package's entries carries TSDoc: what it does (and, for functions, its
 * errors), so that an editor shows it to whoever imports it.
 */
const ENTRIES = ['src/index.ts', 'src/resource-server/index.ts'];

function undocumentedExports(entry: string): string[] {
  const file = join(process.cwd(), entry);
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, skipLibCheck: true, noEmit: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const moduleSymbol = checker.getSymbolAtLocation(source)!;
  return checker.getExportsOfModule(moduleSymbol)
    .filter((exported) => {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      return ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() === '';
    })
    .map((symbol) => symbol.getName())
    .sort();
}

describe('TSDoc on every public export', () => {
  it.each(ENTRIES)('%s', (entry) => {
    expect(undocumentedExports(entry)).toEqual([]);
  }, 60_000);
});

/*
 * Every option and every property of what createAuthServer() returns is in the documentation
 * (docs/configuration.md), found from the code: the option schema is walked, the AuthServer
 * interface is read by the compiler. A new option or property without its words fails here.
 */

const CONFIGURATION = readFileSync(join(process.cwd(), 'docs/configuration.md'), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string): string => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

/** The text of the section under the heading with that anchor, its subsections included. */
function section(markdown: string, anchor: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && slug(line.replace(/^#+ /, '')) === anchor);
  if (start === -1) return '';
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((line, index) => index > start && new RegExp(`^#{1,${level}} `).test(line));
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

/** The code of `text`: fenced blocks, then the spans in backticks (which may wrap a line). */
function codeSpans(text: string): string[] {
  const blocks: string[] = [];
  const rest = text.replace(/```[^\n]*\n([\s\S]*?)```/g, (_fence, code: string) => {
    blocks.push(code);
    return '';
  });
  return [...blocks, ...[...rest.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)];
}

/** Whether `word` is a word of one of the code spans of `text`. */
const inCode = (text: string, word: string): boolean => {
  const pattern = new RegExp(`(?<![A-Za-z0-9_])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_])`);
  return codeSpans(text).some((span) => pattern.test(span));
};

/**
 * Every option path of a zod schema: an object's keys, down through optional, default, pipes,
 * unions (each branch) and arrays (their elements' keys, under the array's path). A record's keys
 * are the caller's (tags, scope names), not options: the walk stops there, as at functions.
 */
function optionPaths(schema: z.ZodType, path: readonly string[] = []): string[][] {
  const def = schema._zod.def as unknown as { type: string; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[]; element?: z.ZodType };
  switch (def.type) {
    case 'optional': case 'nullable': case 'default': case 'prefault': case 'nonoptional': case 'readonly': case 'catch':
      return optionPaths(def.innerType!, path);
    case 'pipe':
      return optionPaths(def.in!, path);
    case 'union':
      return def.options!.flatMap((option) => optionPaths(option, path));
    case 'array':
      return optionPaths(def.element!, path);
    case 'object':
      return Object.entries((schema as z.ZodObject).shape).flatMap(([key, value]) => [[...path, key], ...optionPaths(value as z.ZodType, [...path, key])]);
    default:
      return [];
  }
}

/**
 * Where an option is documented: the rows of the options table for it (`store`, or `limits.x` for
 * `limits`), and the sections of the page those rows link to (`[Stores](#stores)`).
 */
function documentationOf(option: string): string {
  const table = section(CONFIGURATION, 'options').split('\n').filter((line) => line.startsWith('| `'));
  const rows = table.filter((row) => {
    const name = /^\| `([^`]+)`/.exec(row)![1]!;
    return name === option || name.startsWith(`${option}.`);
  });
  const linked = rows.flatMap((row) => [...row.matchAll(/\]\(#([^)]+)\)/g)].map((match) => section(CONFIGURATION, match[1]!)));
  return [...rows, ...linked].join('\n');
}

describe('every option of createAuthServer() is in docs/configuration.md', () => {
  const paths = [...new Map(optionPaths(optionsSchema).map((path) => [path.join('.'), path])).values()];

  it('finds the options in the schema (the walk itself works)', () => {
    const names = paths.map((path) => path.join('.'));
    expect(names).toEqual(expect.arrayContaining([
      'baseUrl', 'audience', 'store.url', 'store.tls.servername', 'store.sentinel.sentinels.port', 'apis.constraints',
      'limits.bodyTimeoutMs', 'rateLimits.failedSignIn.perUsername.windowSeconds', 'portal.internalUrl', 'branding.accentColor',
    ]));
    expect(names.length).toBeGreaterThan(70);
  });

  it('each top-level option has its row, and each option below it is named in that row or a section it links to', () => {
    const missing = paths.filter((path) => {
      const documentation = documentationOf(path[0]!);
      return documentation === '' || !inCode(documentation, path.at(-1)!);
    });
    expect(missing.map((path) => path.join('.'))).toEqual([]);
  });

  it('would notice an option without its words', () => {
    const extended = optionsSchema.extend({ lateOption: z.boolean().optional(), portal: z.object({ enabled: z.boolean(), colourScheme: z.string() }) });
    const missing = optionPaths(extended).filter((path) => !inCode(documentationOf(path[0]!), path.at(-1)!));
    expect(missing.map((path) => path.join('.')).sort()).toEqual(['lateOption', 'portal.colourScheme']);
  });
});

/** Public members of a type declared in this repository (not a dependency's), not marked @internal. */
function ownMembers(type: ts.Type, checker: ts.TypeChecker): string[] {
  return type.getProperties().filter((member) => {
    const declaration = member.valueDeclaration ?? member.declarations?.[0];
    if (!declaration || declaration.getSourceFile().fileName.includes('/node_modules/')) return false;
    if (member.getName().startsWith('#') || ts.getCombinedModifierFlags(declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) return false;
    if (ts.isConstructorDeclaration(declaration)) return false;
    return !ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'internal') && checker !== undefined;
  }).map((member) => member.getName());
}

/** AuthServer's properties, each with the public members of its type when that type is ours. */
function authServerSurface(): Array<{ property: string; members: string[] }> {
  const file = join(process.cwd(), 'src/server.ts');
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, skipLibCheck: true, noEmit: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const declaration = source.statements.find((statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === 'AuthServer')!;
  return checker.getTypeAtLocation(declaration).getProperties().map((property) => {
    const type = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration));
    const callable = type.getCallSignatures().length > 0;
    return { property: property.getName(), members: callable ? [] : ownMembers(type, checker) };
  });
}

describe('every property of what createAuthServer() returns is in docs/configuration.md', () => {
  const returns = section(CONFIGURATION, slug('What `createAuthServer()` returns'));
  /** The bullets of the section, each with its continuation lines. */
  const bullets = returns.split(/\n(?=- )/);
  const surface = authServerSurface();

  it('finds the properties (the compiler read the interface)', () => {
    expect(surface.map(({ property }) => property)).toEqual(expect.arrayContaining(['app', 'middleware', 'audience', 'clientConfigurations', 'close']));
    expect(surface.find(({ property }) => property === 'clientConfigurations')!.members).toEqual(expect.arrayContaining(['create', 'rotateSecret']));
  });

  it('names each property as `auth.<property>`, and each of its methods in that property\'s bullet', () => {
    const missing = surface.flatMap(({ property, members }) => {
      const own = bullets.filter((bullet) => inCode(bullet, `auth.${property}`));
      if (own.length === 0) return [`auth.${property}`];
      return members.filter((member) => !own.some((bullet) => inCode(bullet, member))).map((member) => `auth.${property}.${member}`);
    });
    expect(missing).toEqual([]);
  });
});
