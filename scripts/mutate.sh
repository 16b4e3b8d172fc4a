#!/usr/bin/env bash
# `npm run mutate`: Stryker over the modules that hold security rules (stryker.config.mjs,
# docs/mutation-testing.md), area by area. Incremental: mutants whose code and covering tests did not
# change since reports/mutation/<area>/incremental.json keep their result (a run stopped part-way
# keeps what it tested); `npm run mutate -- --force` re-tests all.
# Stryker 10 wants Node 22 or later: on an older Node, it runs on Node 24 from the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 22 ]; then
  PATH="$(bash scripts/node-from-registry.sh 24):$PATH"
  export PATH
fi
# The tests it runs need a real redis-server, as npm test does.
bash scripts/install-system.sh
bash scripts/install-deps.sh
# Some tests run the built server in a child process (dist/): it must match the sources.
npm run --silent build
# One Stryker run per area (stryker.config.mjs), each against its own tests, with its own report and
# incremental file under reports/mutation/<area>/; MUTATE_AREA=<area> runs that one alone.
if [ -n "${MUTATE_AREA:-}" ]; then
  areas="$MUTATE_AREA"
else
  areas="$(node --input-type=module -e 'const { areas } = await import("./stryker.config.mjs"); console.log(Object.keys(areas).join(" "))')"
fi
status=0
for area in $areas; do
  echo "== mutation testing: area $area"
  node scripts/forget-survivors.mjs "reports/mutation/$area/incremental.json"
  MUTATE_AREA="$area" node node_modules/@stryker-mutator/core/bin/stryker.js run "$@" || status=1
done
# The score of every area measured so far, and of all together (fails under 90% or with an area unmeasured).
node scripts/mutation-score.mjs || status=1
exit "$status"
