// The mutation score of each area (reports/mutation/<area>/report.json, written by `npm run mutate`)
// and of all together, as Stryker counts it: killed and timed-out mutants over every mutant that
// compiles and is not static (survivors and mutants no test reaches count against it).
// Exit code 1 when an area has no report yet or the whole score is under the 90% floor.
import { existsSync, readFileSync } from 'node:fs';
import { areas } from '../stryker.config.mjs';

const FLOOR = 90;
const rows = [];
const total = { detected: 0, valid: 0, survived: 0, noCoverage: 0, timeout: 0 };
const missing = [];
for (const name of Object.keys(areas)) {
  const file = `reports/mutation/${name}/report.json`;
  if (!existsSync(file)) {
    missing.push(name);
    continue;
  }
  const count = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0 };
  for (const { mutants } of Object.values(JSON.parse(readFileSync(file, 'utf8')).files)) {
    for (const { status } of mutants) if (status in count) count[status] += 1;
  }
  const detected = count.Killed + count.Timeout;
  const valid = detected + count.Survived + count.NoCoverage;
  rows.push([name, detected, valid, count.Survived, count.NoCoverage, count.Timeout]);
  total.detected += detected;
  total.valid += valid;
  total.survived += count.Survived;
  total.noCoverage += count.NoCoverage;
  total.timeout += count.Timeout;
}
const say = (line) => process.stdout.write(`${line}\n`);
const percent = (detected, valid) => (valid === 0 ? '-' : `${((100 * detected) / valid).toFixed(1)}%`);
say('area\tscore\tdetected/valid\tsurvived\tno coverage\ttimed out');
for (const [name, detected, valid, survived, noCoverage, timeout] of rows) say(`${name}\t${percent(detected, valid)}\t${detected}/${valid}\t${survived}\t${noCoverage}\t${timeout}`);
say(`all\t${percent(total.detected, total.valid)}\t${total.detected}/${total.valid}\t${total.survived}\t${total.noCoverage}\t${total.timeout}`);
if (missing.length) say(`not measured yet: ${missing.join(', ')}`);
process.exitCode = missing.length || total.valid === 0 || (100 * total.detected) / total.valid < FLOOR ? 1 : 0;
