#!/usr/bin/env bash
# The installed package from the outside: `cmake --install` of BUILD_DIR into
# a temporary prefix, a configure and build of tests/consumer against it
# (find_package(Backpressure), bp::gate), then one admission on a real
# Valkey/Redis started on a free loopback port, its target configured with the
# installed bpctl. Usage: tests/consumer/run.sh BUILD_DIR [CXX_COMPILER]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="$1"
CXX="${2:-c++}"
TMP="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
for b in mockapi loadgen bpctl; do
  [ -x "$TMP/prefix/bin/$b" ] || { echo "FAIL: $b not installed in bin/"; exit 1; }
done
[ -f "$TMP/prefix/share/backpressure/configs/workloads/cross-priority.json" ] ||
  { echo "FAIL: configs not installed"; exit 1; }
# An installed loadgen finds the shipped workloads beside it first.
hint="$("$TMP/prefix/bin/loadgen" --workload cross-priorty 2>&1 || true)"
[[ "$hint" == *"in $TMP/prefix/share/backpressure/configs"* ]] ||
  { echo "FAIL: installed loadgen does not search its share/ folder: $hint"; exit 1; }
cmake -S "$HERE" -B "$TMP/build" -DCMAKE_PREFIX_PATH="$TMP/prefix" \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$TMP/build" -j2 >/dev/null

# A server as tests/support/valkey_server.cpp finds one: valkey-server, else
# redis-server, on a free loopback port (the kernel picks it).
SERVER="$(command -v valkey-server || command -v redis-server || true)"
[ -n "$SERVER" ] || { echo "FAIL: neither valkey-server nor redis-server is installed"; exit 1; }
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$SERVER" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
URL="redis://127.0.0.1:$PORT"
for _ in $(seq 100); do
  "$TMP/prefix/bin/bpctl" --valkey "$URL" targets >/dev/null 2>&1 && break
  sleep 0.05
done

# An unconfigured target fails open (nothing to admit against): configure it.
"$TMP/prefix/bin/bpctl" --valkey "$URL" --target consumer --create set cap --rpm 600 --tpm 60000
out="$("$TMP/build/admit_one" "$URL" consumer)"
[ "$out" = "ADMIT" ] || { echo "FAIL: admit_one printed '$out'"; exit 1; }
# The admission is on the server: one queue, one admit.
"$TMP/prefix/bin/bpctl" --valkey "$URL" --target consumer status --json |
  python3 -c 'import json,sys; q=json.load(sys.stdin)["queues"]; assert len(q)==1 and q[0]["admits"]==1, q'
echo "ok: an outside project built against the installed package admitted one call"
