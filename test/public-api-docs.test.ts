import { join } from 'node:path';
import ts from 'typescript';

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
