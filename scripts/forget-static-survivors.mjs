// node scripts/forget-static-survivors.mjs <incremental.json>: `npm run mutate` calls it before each
// area's run. Stryker's incremental mode keeps a mutant's result unless its code or its covering
// tests changed; a static mutant (code that runs when a module loads: a table, a schema, a
// pattern) has no covering test of its own to compare, so one that survived, or that no test
// loaded, would keep that result after a test for it was added. Forgetting those results makes the
// next run test them again: killed ones stay killed (their killing test is compared as usual).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file || !existsSync(file)) process.exit(0);
const report = JSON.parse(readFileSync(file, 'utf8'));
let forgotten = 0;
for (const entry of Object.values(report.files ?? {})) {
  const kept = entry.mutants.filter((mutant) => !(mutant.static && (mutant.status === 'Survived' || mutant.status === 'NoCoverage')));
  forgotten += entry.mutants.length - kept.length;
  entry.mutants = kept;
}
if (forgotten > 0) {
  writeFileSync(file, JSON.stringify(report));
  console.warn(`${file}: ${forgotten} static mutants that survived or were not covered will be tested again`);
}
