#!/usr/bin/env bash
# ctest wrapper for the real-client test: starts the mockapi binary on a free
# loopback port, runs `node --test` against it, and stops it on any exit.
#   tests/node/run.sh path/to/mockapi
# Exits 77 (ctest: skipped) only when node_modules is absent; scripts/test.sh
# installs it with `npm ci` before running ctest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="${1:?usage: run.sh path/to/mockapi}"
if [ ! -d "$here/node_modules/openai" ]; then
  echo "SKIP: $here/node_modules is absent; run 'npm ci' in tests/node (scripts/test.sh does)"
  exit 77
fi
command -v node >/dev/null || { echo "node not found: run scripts/setup.sh" >&2; exit 1; }
port="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
log="$(mktemp -t bp-node-mockapi.XXXXXX)"
"$binary" --port "$port" --no-limits --latency-min-ms 5 --latency-max-ms 10 >"$log" 2>&1 &
pid=$!
cleanup() {
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { echo "mockapi exited:" >&2; cat "$log" >&2; exit 1; }
  sleep 0.05
done
cd "$here"
MOCKAPI_URL="http://127.0.0.1:$port" node --test client.test.mjs
