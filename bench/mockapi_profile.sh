#!/usr/bin/env bash
# Profile (not a test): where mockapi spends its CPU per request under wrk,
# split into stages (accept/close, read, HTTP parse, JSON parse, token
# estimate, limiter, service, JSON build, HTTP serialize, write, timers, event
# loop, logging) by bench/perf_stages.py from perf's call stacks.
#
#   bench/mockapi_profile.sh              # nginx + limits
#   bench/mockapi_profile.sh nginx limits nolimits binding stream paced
#   BP_PROFILE_SECONDS=8 bench/mockapi_profile.sh limits
#
# Cases: nginx (static file, the reference), nolimits, limits (two fixed
# windows that never bind), binding (the paper's 60 req/s + 12 000 tok/s:
# nearly all 429), stream (stream: true with include_usage, 20 completion
# tokens = 24 server-sent events per answer, zero latency: one write), paced
# (the same stream at 0.05 ms per output token: each event its own chunk,
# written after a timer, 24 sends per answer).
#
# For each case: wrk -t2 -c64 for BP_PROFILE_SECONDS (default 5) without perf,
# giving req/s and the server's CPU microseconds per request (from
# /proc/PID/stat), then the same run under `perf record -e cpu-clock
# --call-graph dwarf`, whose samples give each stage's share; a stage's us/req
# is its share times the unprofiled CPU per request. perf's software clock is
# used because this VM exposes no hardware counters.
#
# mockapi is built with frame pointers and debug info into build-prof/
# (configured and built here on first use; BP_MOCKAPI=path overrides). Needs
# perf (Debian linux-perf), wrk, nginx, python3; run as root or with
# kernel.perf_event_paranoid <= 1 for kernel stacks.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
SECONDS_PER_RUN="${BP_PROFILE_SECONDS:-5}"
THREADS="${BP_WRK_THREADS:-2}"
CONNS="${BP_WRK_CONNECTIONS:-64}"
FREQ="${BP_PERF_FREQ:-999}"
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || CASES=(nginx limits)
for tool in perf wrk python3; do
  command -v "$tool" >/dev/null || { echo "$tool not found (perf: apt-get install linux-perf)" >&2; exit 1; }
done
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
if [ -z "${BP_MOCKAPI:-}" ]; then
  BP_MOCKAPI=build-prof/apps/mockapi
  cmake -S . -B build-prof -DCMAKE_BUILD_TYPE=Release -DBP_BUILD_TESTS=OFF -DBP_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS="-g -fno-omit-frame-pointer" >/dev/null
  cmake --build build-prof -j2 --target mockapi >/dev/null
fi
MOCKAPI="$BP_MOCKAPI"

bench_tempdir bp-prof

BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}],"max_tokens":20}'
STREAM_BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}],"max_tokens":20,"stream":true,"stream_options":{"include_usage":true}}'
lua_for() {  # body -> a wrk script posting it
  local f="$TMP/post-$RANDOM.lua"
  printf 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [[%s]]\n' "$1" >"$f"
  echo "$f"
}

start_mockapi() {  # port flags...
  local port=$1; shift
  "$MOCKAPI" --config configs/mockapi/paper-multi.json --port "$port" --zero-latency \
    --completion-tokens 20 "$@" >"$TMP/mockapi-$port.log" 2>&1 &
  PIDS+=($!)
  SERVER_PIDS=$!
  wait_port "$port"
}
start_nginx() {
  local port=$1 body_port
  body_port=$(free_port)
  start_mockapi "$body_port" --no-limits
  mkdir -p "$TMP/www"; chmod 755 "$TMP" "$TMP/www"
  curl -s -X POST -H 'Content-Type: application/json' --data-binary "$BODY" \
    "http://127.0.0.1:$body_port/v1/chat/completions" >"$TMP/www/chat.json"
  chmod 644 "$TMP/www/chat.json"
  write_nginx_conf "$port"
  "$NGINX" -c "$TMP/nginx.conf" -p "$TMP" >"$TMP/nginx.out" 2>&1 &
  PIDS+=($!)
  wait_port "$port"
  SERVER_PIDS=$(pgrep -P "${PIDS[-1]}" | tr '\n' ' ')
}

# name url [wrk args...]: prints req/s and CPU us/req without perf, then the
# stage table from a second run under perf.
profile() {
  local name=$1 url=$2; shift 2
  local out c0 c1 requests rps us pidlist
  wrk -t"$THREADS" -c"$CONNS" -d1s "$@" "$url" >/dev/null  # warm-up
  c0=$(cpu_ticks $SERVER_PIDS)
  out=$(wrk -t"$THREADS" -c"$CONNS" -d"${SECONDS_PER_RUN}s" "$@" "$url")
  c1=$(cpu_ticks $SERVER_PIDS)
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  us=$(python3 -c "print(f'{($c1 - $c0) * 1e6 / $(getconf CLK_TCK) / $requests:.2f}')")
  echo
  echo "== $name: $rps req/s, $us server CPU us/req (no perf), load $(cut -d' ' -f1-3 /proc/loadavg)"
  pidlist=$(tr ' ' ',' <<<"$SERVER_PIDS" | sed 's/,$//')
  perf record -q -F "$FREQ" -e cpu-clock --call-graph dwarf,16384 -p "$pidlist" \
    -o "$TMP/perf.data" >/dev/null 2>&1 &
  local perf_pid=$!
  sleep 0.5
  out=$(wrk -t"$THREADS" -c"$CONNS" -d"${SECONDS_PER_RUN}s" "$@" "$url")
  kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
  echo "   under perf: $(awk '/^Requests\/sec:/ {print $2}' <<<"$out") req/s"
  perf script -i "$TMP/perf.data" -F tid,ip,sym 2>/dev/null |
    python3 bench/perf_stages.py --us-per-request "$us"
}

echo "mockapi profile: wrk -t$THREADS -c$CONNS, ${SECONDS_PER_RUN}s per run, perf -F $FREQ, $(nproc) cores, $(date -u +%FT%TZ)"
echo "uptime: $(uptime)"
POST=$(lua_for "$BODY")
STREAM=$(lua_for "$STREAM_BODY")
for c in "${CASES[@]}"; do
  port=$(free_port)
  case "$c" in
    nginx) start_nginx "$port"; profile "nginx static file (GET)" "http://127.0.0.1:$port/v1/chat/completions" ;;
    nolimits) start_mockapi "$port" --no-limits
      profile "mockapi, no limits" "http://127.0.0.1:$port/v1/chat/completions" -s "$POST" ;;
    limits) start_mockapi "$port" --limit requests:fixed_window:1000000000:1 \
        --limit tokens:fixed_window:1000000000000:1
      profile "mockapi, limits not binding" "http://127.0.0.1:$port/v1/chat/completions" -s "$POST" ;;
    binding) start_mockapi "$port"
      profile "mockapi, limits binding (429s)" "http://127.0.0.1:$port/v1/chat/completions" -s "$POST" ;;
    stream) start_mockapi "$port" --limit requests:fixed_window:1000000000:1 \
        --limit tokens:fixed_window:1000000000000:1
      profile "mockapi, stream (24 events, one write)" "http://127.0.0.1:$port/v1/chat/completions" -s "$STREAM" ;;
    paced) start_mockapi "$port" --no-limits --per-output-token-ms 0.05
      profile "mockapi, stream paced (24 events)" "http://127.0.0.1:$port/v1/chat/completions" -s "$STREAM" ;;
    *) echo "unknown case $c (nginx nolimits limits binding stream paced)" >&2; exit 2 ;;
  esac
done
echo
echo "uptime: $(uptime)"
