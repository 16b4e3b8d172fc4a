// prepack (after scripts/install-deps.sh, so that a fresh clone packs): what `npm pack` and
// `npm publish` ship is built here, from the sources, into an empty dist/: the library, its CLI
// and their types, without source maps (the sources are not shipped, so maps would point nowhere)
// and without the example server, benchmark or dev tools; the JavaScript without its comments, the
// declarations with their TSDoc. The package also ships docs/*.md
// (package.json "files"), which the README links to.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
rmSync('dist', { recursive: true, force: true });
const tsc = (...flags) => execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.package.json', ...flags], { stdio: 'inherit' });
// The JavaScript without comments (the why of each line is in the repository's sources), the
// declarations with theirs (the TSDoc a host's editor shows).
tsc('--removeComments', '--declaration', 'false');
tsc('--emitDeclarationOnly');
