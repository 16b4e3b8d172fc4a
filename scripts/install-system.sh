#!/usr/bin/env bash
# The Debian packages the tests need (npm test, npm run mutate), installed when missing: a real
# redis-server, redis-cli for the local cluster, Chromium for the pages, openssl for the TLS tests.
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

