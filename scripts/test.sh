#!/usr/bin/env bash
# The test command (README): installs what is missing, builds with warnings as
# errors, installs the pinned npm client for the real-client test, and runs
# every test with ctest. Tests start their own Valkey/Redis and mockapi on free
# loopback ports and stop them.
set -euo pipefail
cd "$(dirname "$0")/.."
BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh
if [ -f tests/node/package-lock.json ]; then
  (cd tests/node && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
cd build
ctest --output-on-failure -j "${BP_TEST_JOBS:-2}" "$@"
