#!/usr/bin/env bash
# npm start: installs what is missing, builds, and serves the example server (memory store unless
# REDIS_URL is set). Works on a fresh clone with nothing installed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
npm run --silent build
exec node dist/examples/server.js
