#!/usr/bin/env bash
# The whole test suite, from a fresh checkout: installs what it needs, type-checks, lints, builds, runs jest.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# redis-cli creates the local Redis Cluster of the adapter tests (Debian: redis-tools).
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
if [ -d test/e2e ] && [ ! -x /usr/bin/chromium ]; then missing+=(chromium); fi
# openssl makes the certificate of the TLS-only redis-server of the TLS tests.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test: installing ${missing[*]} (Debian packages)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

bash scripts/install-deps.sh
npm run --silent typecheck
npm run --silent lint
npm run --silent build
npm run --silent test:jest -- "$@"
