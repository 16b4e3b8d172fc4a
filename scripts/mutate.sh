#!/usr/bin/env bash
# `npm run mutate`: Stryker over the modules that hold security rules (stryker.config.mjs,
# docs/mutation-testing.md). Incremental: mutants whose code and covering tests did not change
# since reports/mutation/incremental.json keep their result; `npm run mutate -- --force` re-tests all.
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
exec node node_modules/@stryker-mutator/core/bin/stryker.js run "$@"
