#!/usr/bin/env bash
# Benchmark (not a test): loadgen's own cost. How many activities per second
# one loadgen process can drive when nothing else limits it: mockapi answers
# at once (--zero-latency, limits far above any rate), the workload has no
# dispatch latency, and the slots and workflows are many. Run with no gate
# (naive) and with the gate (bp: one admission script call on Valkey per
# activity, plus its reconcile), on a redis-server this script starts on a
# free loopback port.
#
#   bench/loadgen_cost.sh
#   BP_LOADGEN_ACTIVITIES=40000 bench/loadgen_cost.sh   # more work per run
#
# Prints, per configuration: activities, wall seconds, activities/s, and CPU
# microseconds per activity of loadgen, mockapi and Valkey (from
# /proc/PID/stat). The paper's workloads need at most 60 activities per paper
# second (the 60 req/s cap; OK plus 429 answers, a few more), so at speedup F
# loadgen must drive about 60 * F calls/s: the measured rate over 60 is the
# speedup beyond which loadgen itself, not the system under test, becomes the
# limit (on this machine, with the other processes sharing its cores).
#
# Needs built loadgen and mockapi (build/apps, or BP_LOADGEN / BP_MOCKAPI) and
# the server scripts/lib/servers.sh finds (scripts/setup.sh builds Valkey 9).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
LOADGEN="${BP_LOADGEN:-build/apps/loadgen}"
MOCKAPI="${BP_MOCKAPI:-build/apps/mockapi}"
ACTIVITIES="${BP_LOADGEN_ACTIVITIES:-20000}"
SPEEDUP="${BP_LOADGEN_SPEEDUP:-10}"
for b in "$LOADGEN" "$MOCKAPI"; do
  [ -x "$b" ] || { echo "$b not built: cmake --build build --target loadgen mockapi" >&2; exit 1; }
done
# shellcheck source=../scripts/lib/servers.sh
source scripts/lib/servers.sh
REDIS="$(bp_server_bin)" || exit 1
echo "server: $(bp_server_describe)"

bench_tempdir bp-lgcost

ticks() {  # user + system clock ticks of pid $1 (and its finished children)
  awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"
}

REDIS_PORT=$(free_port)
"$REDIS" --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  >"$TMP/redis.log" 2>&1 &
PIDS+=($!)
REDIS_PID=$!
MOCK_PORT=$(free_port)
"$MOCKAPI" --port "$MOCK_PORT" --zero-latency --no-limits >"$TMP/mockapi.log" 2>&1 &
PIDS+=($!)
MOCK_PID=$!
wait_port "$REDIS_PORT"
wait_port "$MOCK_PORT"

# Three tenants, one per priority, 64 workflows at once in all, 64 slots, no
# dispatch latency; the upstream's limits (1e9 req/s, 1e12 tok/s) never bind
# and mockapi answers at once.
PER_TENANT=$((ACTIVITIES / 3 / 5))
python3 - "$TMP/cost.json" "$PER_TENANT" <<'PY'
import json, sys
path, workflows = sys.argv[1], int(sys.argv[2])
tenant = lambda i, p, c: {"id": f"t{i}", "priority": p, "concurrency": c, "workflows": workflows,
                          "activities_per_workflow": 5, "prompt_tokens": 100, "max_tokens": 50}
json.dump({
    "name": "loadgen-cost", "description": "loadgen's own cost (bench/loadgen_cost.sh)",
    "slots": 64, "run_length_cap_s": 100000, "dispatch_latency_ms": 0,
    "gate": {"mode": "reconcile", "burst_s": 1.0},
    "tenants": [tenant(1, 1, 16), tenant(2, 2, 16), tenant(3, 3, 32)],
    "upstream": {
        "limits": [{"dimension": "requests", "algorithm": "fixed_window", "limit": 10**9, "window_s": 1},
                   {"dimension": "tokens", "algorithm": "fixed_window", "limit": 10**12, "window_s": 1}],
        "completion_tokens": {"distribution": "fixed", "value": 20},
        "latency": {"min_ms": 0, "max_ms": 0, "per_output_token_ms": 0}},
}, open(path, "w"), indent=1)
PY
TOTAL=$((PER_TENANT * 3 * 5))

echo "loadgen cost: $TOTAL activities per run, speedup $SPEEDUP, $(nproc) cores, $(date -u +%FT%TZ)"
echo "uptime: $(uptime)"
printf '%-8s %10s %8s %12s %16s %16s %16s\n' config activities wall-s activities/s \
  loadgen-cpu-us/act mockapi-cpu-us/act valkey-cpu-us/act
for config in naive bp; do
  m0=$(ticks "$MOCK_PID"); r0=$(ticks "$REDIS_PID")
  start=$(date +%s.%N)
  "$LOADGEN" --workload "$TMP/cost.json" --config "$config" --speedup "$SPEEDUP" --quiet \
    --no-figures --upstream "http://127.0.0.1:$MOCK_PORT" \
    --valkey "redis://127.0.0.1:$REDIS_PORT" --out "$TMP/out-$config" >"$TMP/loadgen-$config.log" 2>&1 &
  lg=$!
  lticks=0
  while kill -0 "$lg" 2>/dev/null; do  # the last reading before it exits
    lticks=$(ticks "$lg" 2>/dev/null || echo "$lticks")
    sleep 0.2
  done
  wait "$lg" || { echo "loadgen failed:" >&2; tail -20 "$TMP/loadgen-$config.log" >&2; exit 1; }
  end=$(date +%s.%N)
  m1=$(ticks "$MOCK_PID"); r1=$(ticks "$REDIS_PID")
  python3 - "$config" "$TOTAL" "$start" "$end" "$lticks" "$((m1 - m0))" "$((r1 - r0))" \
    "$(getconf CLK_TCK)" <<'PY'
import sys
config, n, start, end, lg, mock, redis, hz = sys.argv[1:]
n, wall, hz = int(n), float(end) - float(start), float(hz)
us = lambda t: float(t) * 1e6 / hz / n
print(f"{config:<8} {n:>10} {wall:8.1f} {n / wall:12.0f} {us(lg):16.1f} {us(mock):16.1f} {us(redis):16.1f}")
PY
  # A check that nothing but loadgen limited the run: no 429s, no gate REJECTs.
  awk -F'|' -v c="$config" '$3 ~ "^ *"c" *$" && $4 ~ /^ *0 *$/ {
    print "         (429 share" $5 "of its calls)"; exit}' \
    "$TMP/loadgen-$config.log"
done
echo "uptime: $(uptime)"
echo "(loadgen's CPU is sampled every 0.2 s until it exits, so its last 0.2 s may be missing;"
echo " wall time includes start-up and writing the reports.)"
