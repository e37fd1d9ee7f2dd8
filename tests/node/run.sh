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
log="$(mktemp -t bp-node-mockapi.XXXXXX)"
# Port 0: mockapi binds a port the kernel picks and names it in its
# "listening on" line, so no other process can take the port between a
# lookup and the bind, and the tests start once it listens.
"$binary" --host 127.0.0.1 --port 0 --no-limits --latency-min-ms 5 --latency-max-ms 10 \
  >"$log" 2>&1 &
pid=$!
cleanup() {
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
}
trap cleanup EXIT
port=""
for _ in $(seq 1 600); do
  port="$(sed -n 's|.*mockapi listening on http://127\.0\.0\.1:\([0-9]*\) .*|\1|p' "$log")"
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "mockapi exited:" >&2; cat "$log" >&2; exit 1; }
  sleep 0.05
done
[ -n "$port" ] || { echo "mockapi did not listen within 30 s:" >&2; cat "$log" >&2; exit 1; }
cd "$here"
MOCKAPI_URL="http://127.0.0.1:$port" node --test client.test.mjs
