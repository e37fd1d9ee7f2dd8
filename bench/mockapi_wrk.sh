#!/usr/bin/env bash
# Benchmark (not a test): mockapi's HTTP throughput at zero simulated latency,
# with limits not binding and binding, next to nginx serving an equal
# chat.completion body as a static file (the machine's HTTP ceiling).
#
#   bench/mockapi_wrk.sh                # wrk -t2 -c64 -d10s per case
#   BP_WRK_DURATION=5s bench/mockapi_wrk.sh
#   BP_BENCH_ROUNDS=3 bench/mockapi_wrk.sh   # interleaved rounds, then medians
#                                            # (steadier on a shared machine)
#   BP_MOCKAPI_BASELINE=path bench/mockapi_wrk.sh  # adds that binary (e.g. an
#                                            # older build) as a case, same run
#                                            # (and as a paced stream case)
#   BP_BENCH_STREAM=0 bench/mockapi_wrk.sh   # without the two streaming cases
#   BP_STREAM_TOKEN_MS=5 bench/mockapi_wrk.sh  # the paced cases at 5 ms per
#                                            # output token (default 0.05)
#
# Streaming (SSE) cases: stream: true with include_usage and 20 completion
# tokens, i.e. 24 server-sent events per answer. "one write": zero latency,
# the whole stream in one response; "paced": 0.05 ms per output token (the
# events 42 us apart; BP_STREAM_TOKEN_MS), written as they fall due: by mockapi's per-thread
# stream tick (stream_tick_ms, default 2 ms) a few sends per answer, or one
# send per event for a binary that paces each event with its own timer. Their
# CPU per event is the CPU per request / 24.
#
# Needs wrk and nginx (scripts/setup.sh installs both) and a built mockapi
# (build/apps/mockapi, or BP_MOCKAPI=path). Everything listens on free
# loopback ports and is stopped on exit, Ctrl-C or failure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
MOCKAPI="${BP_MOCKAPI:-build/apps/mockapi}"
DURATION="${BP_WRK_DURATION:-10s}"
THREADS="${BP_WRK_THREADS:-2}"
CONNS="${BP_WRK_CONNECTIONS:-64}"
ROUNDS="${BP_BENCH_ROUNDS:-1}"
TOKEN_MS="${BP_STREAM_TOKEN_MS:-0.05}"
bad() { echo "mockapi_wrk: $*" >&2; exit 2; }
[[ "$THREADS" =~ ^[1-9][0-9]{0,2}$ ]] || bad "BP_WRK_THREADS must be an integer in [1, 999], got '$THREADS'"
[[ "$CONNS" =~ ^[1-9][0-9]{0,4}$ ]] || bad "BP_WRK_CONNECTIONS must be a positive integer, got '$CONNS'"
[[ "$ROUNDS" =~ ^[1-9][0-9]{0,2}$ ]] || bad "BP_BENCH_ROUNDS must be an integer in [1, 999], got '$ROUNDS'"
[[ "$TOKEN_MS" =~ ^[0-9]{1,4}(\.[0-9]{1,3})?$ ]] ||
  bad "BP_STREAM_TOKEN_MS must be a number of ms like 0.05 or 5, got '$TOKEN_MS'"
[[ "$DURATION" =~ ^[1-9][0-9]*[smh]?$ ]] || bad "BP_WRK_DURATION must be like 10s, 2m or 1h, got '$DURATION'"
[ -z "${BP_MOCKAPI_BASELINE:-}" ] || [ -x "$BP_MOCKAPI_BASELINE" ] ||
  bad "BP_MOCKAPI_BASELINE '$BP_MOCKAPI_BASELINE' is not an executable mockapi binary"
command -v wrk >/dev/null || { echo "wrk not found: run scripts/setup.sh" >&2; exit 1; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$NGINX" ] || { echo "nginx not found: run scripts/setup.sh" >&2; exit 1; }
[ -x "$MOCKAPI" ] || { echo "$MOCKAPI not built: run scripts/setup.sh" >&2; exit 1; }

bench_tempdir bp-bench

# name "server pids" events url [wrk args...]: prints req/s, p99, non-2xx
# answers and the server's CPU microseconds per request (robust to other load
# on the box); `events` is the number of SSE events per answer (0: not a stream).
run_wrk() {
  local name=$1 pids=$2 events=$3 url=$4; shift 4
  local out c0 c1
  c0=$(cpu_ticks $pids)
  out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$@" "$url")
  c1=$(cpu_ticks $pids)
  local rps p99 non2xx requests cpu_us
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  cpu_us=$(awk -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v n="$requests" \
    'BEGIN {printf "%.1f", t * 1e6 / hz / n}')
  printf '%-40s %12s %10s %12s %14s\n' "$name" "$rps" "$p99" "${non2xx:-0}" "$cpu_us"
  printf '%s|%s|%s|%s|%s\n' "$name" "$rps" "$p99" "$cpu_us" "$events" >>"$TMP/results"
}

start_mockapi() {  # port flags...
  local port=$1; shift
  "${BINARY:-$MOCKAPI}" --config configs/mockapi/paper-multi.json --port "$port" --zero-latency \
    --completion-tokens 20 "$@" >"$TMP/mockapi-$port.log" 2>&1 &
  PIDS+=($!)
  MOCKAPI_PID=$!
  wait_port "$port"
}

# nginx: the same chat.completion body mockapi answers, as a static file.
NGINX_PORT=$(free_port)
mkdir -p "$TMP/www"
chmod 755 "$TMP" "$TMP/www"  # nginx workers may run as an unprivileged user
curl_body_port=$(free_port)
start_mockapi "$curl_body_port" --no-limits
NOLIMIT_PID=$MOCKAPI_PID
curl -s -X POST -H 'Content-Type: application/json' --data-binary \
  '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}],"max_tokens":20}' \
  "http://127.0.0.1:$curl_body_port/v1/chat/completions" >"$TMP/www/chat.json"
chmod 644 "$TMP/www/chat.json"
write_nginx_conf "$NGINX_PORT"
"$NGINX" -c "$TMP/nginx.conf" -p "$TMP" >"$TMP/nginx.out" 2>&1 &
PIDS+=($!)
wait_port "$NGINX_PORT"
NGINX_WORKERS=$(pgrep -P "${PIDS[-1]}" | tr '\n' ' ')

LOOSE=$(free_port); BINDING=$(free_port)
# Not binding: limits far above what wrk can send; binding: the paper's
# 60 req/s + 12 000 tok/s, so nearly every call is a 429.
start_mockapi "$LOOSE" --limit requests:fixed_window:1000000000:1 --limit tokens:fixed_window:1000000000000:1
LOOSE_PID=$MOCKAPI_PID
start_mockapi "$BINDING"
BINDING_PID=$MOCKAPI_PID
STREAMING="${BP_BENCH_STREAM:-1}"
if [ "$STREAMING" = 1 ]; then
  STREAM_ONE=$(free_port); STREAM_PACED=$(free_port)
  start_mockapi "$STREAM_ONE" --no-limits
  STREAM_ONE_PID=$MOCKAPI_PID
  start_mockapi "$STREAM_PACED" --no-limits --per-output-token-ms "$TOKEN_MS"
  STREAM_PACED_PID=$MOCKAPI_PID
fi
if [ -n "${BP_MOCKAPI_BASELINE:-}" ]; then
  BASELINE=$(free_port)
  BINARY="$BP_MOCKAPI_BASELINE" start_mockapi "$BASELINE" \
    --limit requests:fixed_window:1000000000:1 --limit tokens:fixed_window:1000000000000:1
  BASELINE_PID=$MOCKAPI_PID
  if [ "$STREAMING" = 1 ]; then
    BASELINE_PACED=$(free_port)
    BINARY="$BP_MOCKAPI_BASELINE" start_mockapi "$BASELINE_PACED" --no-limits --per-output-token-ms "$TOKEN_MS"
    BASELINE_PACED_PID=$MOCKAPI_PID
  fi
fi

echo "wrk -t$THREADS -c$CONNS -d$DURATION on $(nproc) cores, $(date -u +%FT%TZ)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-40s %12s %10s %12s %14s\n' "case" "req/s" "p99" "non-2xx" "server-cpu-us/req"
for _ in $(seq 1 "$ROUNDS"); do
  run_wrk "nginx static file (GET)" "$NGINX_WORKERS" 0 "http://127.0.0.1:$NGINX_PORT/v1/chat/completions"
  run_wrk "mockapi, no limits" "$NOLIMIT_PID" 0 "http://127.0.0.1:$curl_body_port/v1/chat/completions" -s bench/wrk_chat.lua
  run_wrk "mockapi, limits not binding" "$LOOSE_PID" 0 "http://127.0.0.1:$LOOSE/v1/chat/completions" -s bench/wrk_chat.lua
  run_wrk "mockapi, limits binding (429s)" "$BINDING_PID" 0 "http://127.0.0.1:$BINDING/v1/chat/completions" -s bench/wrk_chat.lua
  if [ -n "${BP_MOCKAPI_BASELINE:-}" ]; then
    run_wrk "baseline binary, limits not binding" "$BASELINE_PID" 0 "http://127.0.0.1:$BASELINE/v1/chat/completions" -s bench/wrk_chat.lua
  fi
  if [ "$STREAMING" = 1 ]; then
    run_wrk "mockapi, stream (24 events, one write)" "$STREAM_ONE_PID" 24 "http://127.0.0.1:$STREAM_ONE/v1/chat/completions" -s bench/wrk_stream.lua
    run_wrk "mockapi, stream paced (24 events)" "$STREAM_PACED_PID" 24 "http://127.0.0.1:$STREAM_PACED/v1/chat/completions" -s bench/wrk_stream.lua
    if [ -n "${BP_MOCKAPI_BASELINE:-}" ]; then
      run_wrk "baseline binary, stream paced" "$BASELINE_PACED_PID" 24 "http://127.0.0.1:$BASELINE_PACED/v1/chat/completions" -s bench/wrk_stream.lua
    fi
  fi
done
if [ "$ROUNDS" -gt 1 ]; then
  echo
  echo "medians over $ROUNDS rounds (ratio: req/s over nginx's median):"
  printf '%-40s %12s %10s %11s %8s %13s\n' "case" "req/s" "p99" "cpu-us/req" "ratio" "cpu-us/event"
  python3 - "$TMP/results" <<'PY'
import collections, statistics, sys
rows = collections.OrderedDict()
events = {}
for line in open(sys.argv[1]):
    name, rps, p99, cpu, ev = line.rstrip("\n").split("|")
    rows.setdefault(name, []).append((float(rps), p99, float(cpu)))
    events[name] = int(ev)
def ms(p):  # wrk prints us, ms or s
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if p.endswith(unit):
            return float(p[: -len(unit)]) * f
    return float("nan")
nginx = statistics.median(r[0] for r in next(iter(rows.values())))
for name, rs in rows.items():
    rps = statistics.median(r[0] for r in rs)
    p99 = statistics.median(ms(r[1]) for r in rs)
    cpu = statistics.median(r[2] for r in rs)
    per_event = f"{cpu / events[name]:13.2f}" if events[name] else ""
    print(f"{name:<40} {rps:12.0f} {p99:8.2f}ms {cpu:11.1f} {rps / nginx:8.2f} {per_event}")
PY
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
