#!/usr/bin/env bash
# The mixed run (docs/mixed-workers.md): loadgen's bp tenants and external
# Python and Node worker processes (clients/*/examples) as further tenants on
# ONE gate target and ONE mockapi, which this script starts on free loopback
# ports. Everyone starts at one unix time and stops by itself after
# --seconds; the report (scripts/lib/mixed_report.py) counts every process's
# tenants in one table: admitted per dimension vs the cap, 429 share,
# achievement per tenant against the weighted-DRF fair share, achievement-Jain.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'USAGE'
usage: scripts/mixed-workers.sh [--out DIR] [--seconds S] [--python N] [--node N] [--slots N]
                               [--restart-at S [--down-s S]]

  --out DIR     results folder (default results/mixed-workers-<UTC time>)
  --seconds S   run length in seconds, every process (default 60, at most 600)
  --python N    external Python worker processes, one tenant each (default 2)
  --node N      external Node worker processes, one tenant each (default 2)
  --slots N     concurrent calls per external worker (default 4)
  --restart-at S  kill the Valkey hard (SIGKILL) S seconds after the start and start an
                empty one on the same port --down-s later (default 3): every process
                fails open, then re-seeds the target from the declared configuration
loadgen's tenants, the upstream and the gate's caps: configs/mixed/workload.json
and configs/mixed/gate.json (the declared configuration every process gets).
USAGE
}
OUT=""
SECONDS_RUN=60
N_PY=2
N_NODE=2
SLOTS=4
RESTART_AT=0
DOWN_S=3
while [ "$#" -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --python) N_PY="$2"; shift 2 ;;
    --node) N_NODE="$2"; shift 2 ;;
    --slots) SLOTS="$2"; shift 2 ;;
    --restart-at) RESTART_AT="$2"; shift 2 ;;
    --down-s) DOWN_S="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "mixed-workers: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
for pair in "seconds $SECONDS_RUN 5 600" "python $N_PY 0 16" "node $N_NODE 0 16" "slots $SLOTS 1 64" \
            "restart-at $RESTART_AT 0 600" "down-s $DOWN_S 1 60"; do
  read -r name v lo hi <<<"$pair"
  if ! [[ "$v" =~ ^[0-9]+$ ]] || [ "$v" -lt "$lo" ] || [ "$v" -gt "$hi" ]; then
    echo "mixed-workers: --$name must be an integer in [$lo, $hi], got '$v'" >&2; exit 2
  fi
done
for b in build/apps/loadgen build/apps/mockapi; do
  [ -x "$b" ] || { echo "mixed-workers: $b not built (scripts/setup.sh)" >&2; exit 2; }
done
if [ "$N_NODE" -gt 0 ] && [ ! -d clients/node/node_modules/openai ]; then
  echo "mixed-workers: clients/node/node_modules is absent; run 'npm ci' in clients/node" >&2; exit 2
fi
OUT=${OUT:-results/mixed-workers-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
WORKLOAD=configs/mixed/workload.json
DECLARED=configs/mixed/gate.json

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
bp_start_valkey
bp_start_mockapi configs/mockapi/paper-single.json

# The run length cap is loadgen's stop; the file's is replaced by --seconds.
python3 - "$WORKLOAD" "$SECONDS_RUN" "$OUT/workload.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["run_length_cap_s"] = int(sys.argv[2])
json.dump(w, open(sys.argv[3], "w"), indent=2)
PY

TARGET="mixed-$(date +%s)"
# Far enough ahead for loadgen's setup (mockapi PUT, the gate target written
# from DECLARED) and the interpreters' start.
START_MS=$(( $(date +%s%3N) + 4000 ))
echo "target $TARGET, start at $START_MS, $SECONDS_RUN s; loadgen + $N_PY python + $N_NODE node workers" >&2
timeout $((SECONDS_RUN + 120)) ./build/apps/loadgen -w "$OUT/workload.json" -c bp --speedup 1 \
  --valkey "$BP_VALKEY_URL" --upstream "$BP_MOCKAPI_URL" --shard 0/1 --start-at "$START_MS" \
  --gate-target "$TARGET" --gate-config "$DECLARED" --out "$OUT/shards" --quiet --no-figures \
  >"$OUT/loadgen.log" 2>&1 &
pids=($!)
common=(--target "$TARGET" --valkey "$BP_VALKEY_URL" --mockapi "$BP_MOCKAPI_URL"
        --seconds "$SECONDS_RUN" --start-at "$START_MS" --slots "$SLOTS" --timeout-ms 200
        --declared-config "$DECLARED")
for i in $(seq 0 $((N_PY - 1))); do
  timeout $((SECONDS_RUN + 60)) /usr/bin/python3 clients/python/examples/worker.py "${common[@]}" \
    --tenant "py-$i" --summary "$OUT/py-$i.json" >"$OUT/py-$i.log" 2>&1 &
  pids+=($!)
done
for i in $(seq 0 $((N_NODE - 1))); do
  timeout $((SECONDS_RUN + 60)) node clients/node/examples/worker.mjs "${common[@]}" \
    --tenant "node-$i" --summary "$OUT/node-$i.json" >"$OUT/node-$i.log" 2>&1 &
  pids+=($!)
done
if [ "$RESTART_AT" -gt 0 ]; then
  [ "$RESTART_AT" -lt "$SECONDS_RUN" ] || { echo "mixed-workers: --restart-at must be below --seconds" >&2; exit 2; }
  sleep "$(python3 -c "import time; print(max(0, $START_MS / 1000 + $RESTART_AT - time.time()))")"
  kill -KILL "$(cat "$BP_VALKEY_PIDFILE")"
  echo "valkey killed at ${RESTART_AT} s" >&2
  sleep "$DOWN_S"
  port=${BP_VALKEY_URL##*:}
  "$(bp_server_bin)" --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize no --loglevel warning --logfile "$BP_TMP/valkey.log" --pidfile "$BP_TMP/valkey.pid" &
  BP_STARTED_PIDS+=($!)
  bp_wait_port "$port" 10 || { echo "mixed-workers: valkey did not restart on $port" >&2; exit 1; }
  echo "valkey restarted empty on port $port at $((RESTART_AT + DOWN_S)) s" >&2
fi
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=$((fail + 1)); done
[ "$fail" -eq 0 ] || { echo "mixed-workers: $fail process(es) failed; logs in $OUT" >&2; tail -n 5 "$OUT"/*.log >&2; exit 1; }
./build/apps/loadgen merge --out "$OUT/loadgen" "$OUT/shards" --no-figures >"$OUT/merge.log" 2>&1 ||
  { echo "mixed-workers: loadgen merge failed:" >&2; cat "$OUT/merge.log" >&2; exit 1; }
python3 scripts/lib/mixed_report.py --declared "$DECLARED" --start-ms "$START_MS" \
  --seconds "$SECONDS_RUN" --loadgen "$OUT/loadgen" "$OUT"/py-*.json "$OUT"/node-*.json |
  tee "$OUT/report.md"
