#!/usr/bin/env bash
# Installs node_modules from the committed lock, exactly (npm ci), when it is missing or older
# than the lock. A lock that npm ci refuses fails here: it is never papered over with npm install.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "installing dependencies from package-lock.json (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
