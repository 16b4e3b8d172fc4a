// node scripts/forget-survivors.mjs <incremental.json>: `npm run mutate` calls it before each area's
// run, so that every mutant that survived or was not covered is tested again. Stryker's
// incremental mode keeps a mutant's result unless its code or the tests that cover it changed, and
// it misses two cases: a static mutant (code that runs when a module loads: a table, a schema, a
// pattern) has no covering test of its own to compare, and a test added beside others that cover
// the same function was not always seen as new (measured on `policies`: survivors kept whose new
// rows killed them when run by hand). Survivors are few (under a tenth of an area's mutants), so
// testing them again costs little; killed mutants keep their result as before.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file || !existsSync(file)) process.exit(0);
const report = JSON.parse(readFileSync(file, 'utf8'));
let forgotten = 0;
for (const entry of Object.values(report.files ?? {})) {
  const kept = entry.mutants.filter((mutant) => mutant.status !== 'Survived' && mutant.status !== 'NoCoverage');
  forgotten += entry.mutants.length - kept.length;
  entry.mutants = kept;
}
if (forgotten > 0) {
  writeFileSync(file, JSON.stringify(report));
  console.warn(`${file}: ${forgotten} mutants that survived or were not covered will be tested again`);
}
