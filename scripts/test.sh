#!/usr/bin/env bash
# The whole test suite, from a fresh checkout: installs what it needs, type-checks, lints, builds, runs jest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-system.sh
bash scripts/install-deps.sh
npm run --silent typecheck
npm run --silent lint
npm run --silent build
npm run --silent test:jest -- "$@"
