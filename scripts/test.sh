#!/usr/bin/env bash
# The test command (README): installs what is missing, builds with warnings as
# errors (scripts/setup.sh, which also installs the pinned npm packages), and
# runs every test with ctest. Tests start their own server (the Valkey 9 setup
# builds; docs/servers.md) and mockapi on free loopback ports and stop them.
#
#   scripts/test.sh                      # everything, on Valkey 9
#   BP_SERVER=redis scripts/test.sh -L gate   # the gate's suite on Redis 7
# (arguments go to ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh
# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
server=$(bp_server_describe) || exit 1
echo "test: server $server, cli $(bp_cli_bin)"
case "$server" in
  valkey\ 9.*) ;;
  *) echo "test: *** not Valkey 9: hash-field expiry (HPEXPIRE/HPTTL) is unavailable (docs/servers.md) ***" ;;
esac
cd build
ctest --output-on-failure -j "${BP_TEST_JOBS:-2}" "$@"
