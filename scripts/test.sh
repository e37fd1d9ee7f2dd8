#!/usr/bin/env bash
# The test command (README): installs what is missing, builds with warnings as
# errors, installs the pinned npm packages (the real-client test, the Node gate client), and runs
# every test with ctest. Tests start their own Valkey/Redis and mockapi on free
# loopback ports and stop them.
set -euo pipefail
cd "$(dirname "$0")/.."
BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh
for dir in tests/node clients/node; do
  if [ -f "$dir/package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
done
cd build
ctest --output-on-failure -j "${BP_TEST_JOBS:-2}" "$@"
