#!/usr/bin/env bash
# ctest driver for the Node client: node's test runner over the pinned
# iovalkey (package-lock.json; scripts/test.sh runs `npm ci` here). Exits 77
# (ctest: skipped) only when node_modules is absent.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d node_modules/iovalkey ]; then
  echo "SKIP: clients/node/node_modules is absent; run 'npm ci' in clients/node (scripts/test.sh does)"
  exit 77
fi
exec node --test --test-timeout=60000 test/*.test.mjs
