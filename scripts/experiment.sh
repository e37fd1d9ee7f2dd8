#!/usr/bin/env bash
# The main job (interim, until the experiment replaces it): starts mockapi
# with the OpenAI-like 60 RPM config on a free loopback port, sends a burst of
# chat completions with curl that shows 200s turning into 429s (status and
# retry-after-ms per call), prints the server's stats, and stops it on exit,
# Ctrl-C or failure.
#
#   scripts/experiment.sh              # 75 calls, 10 at a time
#   BP_BURST_CALLS=100 BP_BURST_PARALLEL=20 scripts/experiment.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CALLS="${BP_BURST_CALLS:-75}"
PARALLEL="${BP_BURST_PARALLEL:-10}"
CONFIG=configs/mockapi/openai-60rpm.json
MOCKAPI="${BP_MOCKAPI:-build/apps/mockapi}"

if [ ! -x "$MOCKAPI" ]; then
  echo "experiment: $MOCKAPI not built; running scripts/setup.sh"
  ./scripts/setup.sh
fi
command -v curl >/dev/null || { echo "experiment: curl not found" >&2; exit 1; }

TMP="$(mktemp -d -t bp-experiment.XXXXXX)"
PID=""
cleanup() {
  if [ -n "$PID" ]; then
    kill -TERM "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "experiment: interrupted" >&2; exit 130' INT TERM

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$MOCKAPI" --config "$CONFIG" --port "$PORT" >"$TMP/mockapi.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  kill -0 "$PID" 2>/dev/null || { echo "experiment: mockapi exited:" >&2; cat "$TMP/mockapi.log" >&2; exit 1; }
  sleep 0.05
done
URL="http://127.0.0.1:$PORT"
echo "mockapi $CONFIG on $URL: 60 requests per clock-aligned minute"
echo "(a burst that straddles a minute edge meets a fresh window, so more than 60 may pass)"
echo "sending $CALLS chat completions, $PARALLEL at a time"

call() {  # index -> "index status retry-after-ms bound"
  local out
  out=$(curl -s -o /dev/null -X POST "$URL/v1/chat/completions" \
    -H 'Content-Type: application/json' -H 'Authorization: Bearer sk-mock' \
    -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Write one line about backpressure."}],"max_tokens":30}' \
    -w '%{http_code} %header{retry-after-ms} %header{x-mockapi-bound}')
  echo "$1 $out"
}
export -f call
export URL
seq 1 "$CALLS" | xargs -P "$PARALLEL" -I{} bash -c 'call {}' >"$TMP/calls.txt"
# In the order the answers arrived (call numbers interleave under parallelism).
awk '{
  printf "answer %3d (call %3d)  HTTP %s", NR, $1, $2
  if ($2 == 429) printf "  retry-after-ms %s  bound %s", $3, $4
  printf "\n"
  n[$2]++
} END { printf "\n"; for (s in n) printf "HTTP %s: %d calls\n", s, n[s] }' "$TMP/calls.txt"
echo
echo "server stats ($URL/stats):"
curl -s "$URL/stats"
echo
