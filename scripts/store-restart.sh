#!/usr/bin/env bash
# A store restart loadgen does not arrange (docs/store-restart.md): the
# state-restart workload without its events runs under bp twice against a
# Valkey and a mockapi this script starts on free loopback ports, once
# undisturbed and once with this script killing the Valkey hard (SIGKILL) at
# KILL_S and starting an empty one on the same port RESTART_S later. loadgen
# is given nothing about it (no --valkey-pid): the gate clients re-seed the
# target. Prints the 429 share of upstream answers over the same window after
# the restart in both runs, and the runs' closing lines.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: scripts/store-restart.sh [--out DIR] [--kill-s S] [--down-s S] [--window-s FROM TO]

  --out DIR        results folder (default results/store-restart-<UTC time>)
  --kill-s S       seconds after loadgen starts that the Valkey is killed (default 15)
  --down-s S       seconds it stays down before an empty restart (default 5)
  --window-s A B   the 429 share is measured over [A, B] s of the run (default 25 38)
Runs at speedup 1 (paper time = real time), about 2 minutes.
EOF
}
OUT=""
KILL_S=15
DOWN_S=5
FROM_S=25
TO_S=38
while [ "$#" -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --kill-s) KILL_S="$2"; shift 2 ;;
    --down-s) DOWN_S="$2"; shift 2 ;;
    --window-s) FROM_S="$2"; TO_S="$3"; shift 3 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "store-restart: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
OUT=${OUT:-results/store-restart-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
for b in build/apps/loadgen build/apps/mockapi; do
  [ -x "$b" ] || { echo "store-restart: $b not built" >&2; exit 2; }
done

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
bp_start_valkey
bp_start_mockapi configs/mockapi/paper-single.json
VALKEY_BIN=$(command -v valkey-server || command -v redis-server)
PORT=${BP_VALKEY_URL##*:}

python3 - "$OUT/workload.json" <<'PY'
import json, sys
w = json.load(open("configs/scenarios/state-restart.json"))
w["name"] = "store-restart"
w["description"] = "state-restart without events: the store restart is not loadgen's"
w.pop("events", None)
json.dump(w, open(sys.argv[1], "w"), indent=2)
PY

run() {  # name
  ./build/apps/loadgen -w "$OUT/workload.json" -c bp --speedup 1 --valkey "$BP_VALKEY_URL" \
    --upstream "$BP_MOCKAPI_URL" --out "$OUT/$1" --quiet --no-figures >"$OUT/$1.log" 2>&1
}

echo "undisturbed run..."
run undisturbed
echo "run with a hard kill at ${KILL_S} s and an empty restart ${DOWN_S} s later..."
run restarted &
LOADGEN=$!
sleep "$KILL_S"
kill -KILL "$(cat "$BP_VALKEY_PIDFILE")"
sleep "$DOWN_S"
"$VALKEY_BIN" --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
  --daemonize no --loglevel warning --logfile "$BP_TMP/valkey.log" \
  --pidfile "$BP_TMP/valkey.pid" &
BP_STARTED_PIDS+=($!)
bp_wait_port "$PORT" 10
echo "restarted empty on port $PORT"
wait "$LOADGEN"

python3 - "$OUT" "$FROM_S" "$TO_S" <<'PY' | tee "$OUT/figures.md"
import csv, glob, sys
out, a, b = sys.argv[1], float(sys.argv[2]) * 1000, float(sys.argv[3]) * 1000
print(f"| run | answers in [{a/1000:g}, {b/1000:g}] s | 429s | 429 share |")
print("|---|---|---|---|")
for name in ("undisturbed", "restarted"):
    path = glob.glob(f"{out}/{name}/*/bp/r0/attempts.csv")[0]
    n = t = 0
    for row in csv.DictReader(open(path)):
        if a <= float(row["done_ms"]) < b:
            n += 1
            t += row["status"] == "429"
    print(f"| {name} | {n} | {t} | {100 * t / max(n, 1):.2f} % |")
PY
# Timeline: upstream answers per second (OK and 429) of both runs, with the
# kill and the restart marked.
python3 - "$OUT" <<'PY'
import collections, csv, glob, sys
out = sys.argv[1]
for name in ("undisturbed", "restarted"):
    path = glob.glob(f"{out}/{name}/*/bp/r0/attempts.csv")[0]
    ok, thr = collections.Counter(), collections.Counter()
    for row in csv.DictReader(open(path)):
        s = int(float(row["done_ms"]) // 1000)
        if row["status"] == "429":
            thr[s] += 1
        elif row["status"] == "200":
            ok[s] += 1
    with open(f"{out}/{name}.per_s.dat", "w") as f:
        for s in range(max(ok.keys() | thr.keys()) + 1):
            f.write(f"{s} {ok[s]} {thr[s]}\n")
PY
if command -v gnuplot >/dev/null; then
  RESTART_S=$((KILL_S + DOWN_S))
  gnuplot <<GP
set terminal pngcairo size 900,420
set output "$OUT/timeline.png"
set title "bp: Valkey SIGKILLed at ${KILL_S} s, restarted empty at ${RESTART_S} s (not by loadgen)"
set xlabel "run time (s)"
set ylabel "upstream answers per second"
set key top right
set arrow from ${KILL_S}, graph 0 to ${KILL_S}, graph 1 nohead dt 2 lc rgb "black"
set arrow from ${RESTART_S}, graph 0 to ${RESTART_S}, graph 1 nohead dt 2 lc rgb "black"
plot "$OUT/restarted.per_s.dat" using 1:2 with steps lw 2 lc rgb "#1f77b4" title "restarted: OK", \
     "$OUT/restarted.per_s.dat" using 1:3 with steps lw 2 lc rgb "#d62728" title "restarted: 429", \
     "$OUT/undisturbed.per_s.dat" using 1:2 with steps dt 3 lc rgb "#1f77b4" title "undisturbed: OK", \
     "$OUT/undisturbed.per_s.dat" using 1:3 with steps dt 3 lc rgb "#d62728" title "undisturbed: 429"
GP
  echo "timeline: $OUT/timeline.png"
fi
grep -h "failed open\|re-seeded\|activities failed" "$OUT"/*.log || true
