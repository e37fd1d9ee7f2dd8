#!/usr/bin/env bash
# The scale scenario (docs/results.md, "Scale"): configs/scale/scale.json
# (4 heavy tenants of weight 500 with 100 workflows at once, and L light
# tenants of weight 1 with one call at a time, all backlogged for the whole
# 45 s run, 400 req/s) under bp, once per L (default 100, 1000, 10000),
# against a Valkey and a mockapi started here on free loopback ports (stopped
# on exit). Per L it reports:
#   - Gate::Admit latency p50/p99 (real ms, on loadgen's gate threads:
#     summary.json gate_admit_real_ms) and the server's time per EVALSHA
#     (INFO commandstats, reset before each run), gate calls per OK call;
#   - the heavy tenants' achievement (OK req/s / weighted fair share) and the
#     light tenants' together, 429 share, tenants never served;
#   - Valkey memory per active queue: after the run, (MEMORY USAGE of the
#     state hash minus a copy of it without its q:<queue> fields, plus the
#     bl/bx/seen sorted sets) / number of q: fields; and used_memory growth.
# About 3 minutes (3 x 45 s plus setup). The server is flushed between runs.
set -euo pipefail
cd "$(dirname "$0")/.."

LIGHTS="100 1000 10000"
PROCESSES=1
SPEEDUP=1
OUT=""
SETUP=1
usage() {
  cat <<'EOF'
usage: scripts/scale.sh [--lights "100 1000 10000"] [--processes N] [--speedup F]
                        [--out DIR] [--no-setup]
  configs/scale/scale.json under bp once per number of light tenants L (the
  4 heavy tenants stay); loadgen as N cooperating processes (default 1).
  Writes DIR/scale.md (default results/scale-<UTC time>) and each run's report.
EOF
}
die() { echo "scale: $*" >&2; exit 2; }
# shellcheck source=lib/flags.sh
source scripts/lib/flags.sh  # need_arg, bp_check_speedup
while [ "$#" -gt 0 ]; do
  case "$1" in
    --lights) need_arg "$@"; LIGHTS="$2"; shift 2 ;;
    --processes) need_arg "$@"; PROCESSES="$2"; shift 2 ;;
    --speedup) need_arg "$@"; SPEEDUP="$2"; shift 2 ;;
    --out) need_arg "$@"; OUT="$2"; shift 2 ;;
    --no-setup) SETUP=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
for l in $LIGHTS; do
  [[ "$l" =~ ^[1-9][0-9]*$ ]] && [ "$l" -le 1000000 ] || die "--lights: each L an integer in [1, 1000000], got '$l'"
done
[ -n "${LIGHTS// /}" ] || die "--lights is empty"
[[ "$PROCESSES" =~ ^[1-9][0-9]*$ ]] && [ "$PROCESSES" -le 256 ] || die "--processes must be in [1, 256], got '$PROCESSES'"
bp_check_speedup "$SPEEDUP"
[ -n "$OUT" ] || OUT="results/scale-$(date -u +%Y%m%dT%H%M%SZ)"
[ ! -e "$OUT" ] || [ -d "$OUT" ] || die "--out '$OUT' exists and is not a directory"
mkdir -p "$OUT" 2>/dev/null && [ -w "$OUT" ] || die "--out '$OUT' cannot be created or written"
for L in $LIGHTS; do  # every light count must leave each process a tenant
  [ $((L + 4)) -ge "$PROCESSES" ] || die "--processes $PROCESSES exceeds the $((L + 4)) tenants of --lights $L"
done

if [ "$SETUP" -eq 1 ]; then
  BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh --apps
fi
for b in build/apps/loadgen build/apps/mockapi; do
  [ -x "$b" ] || die "$b is not built (run scripts/setup.sh)"
done

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
CLI=$(bp_cli_bin) || die "no valkey-cli or redis-cli (run scripts/setup.sh)"
bp_servers_init
bp_start_valkey
bp_start_mockapi configs/mockapi/paper-single.json
mkdir -p "$OUT/workloads"
{
  echo "command: scripts/scale.sh --lights \"$LIGHTS\" --processes $PROCESSES --speedup $SPEEDUP"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  git: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "server: $BP_SERVER_DESC"
  echo "machine: $(nproc) cores, $(uname -srm); uptime:$(uptime | sed 's/.*load average/ load average/')"
} | tee "$OUT/run-info.txt"
cli() { "$CLI" -u "$BP_VALKEY_URL" "$@"; }

ROWS="$OUT/rows.jsonl"
: >"$ROWS"
for L in $LIGHTS; do
  W="$OUT/workloads/scale-$L.json"
  python3 - "$L" "$W" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
w = json.load(open("configs/scale/scale.json"))
w["name"] = "scale-%d" % n
for t in w["tenants"]:
    if t["id"] == "light":
        t["count"] = n
json.dump(w, open(path, "w"), indent=1)
PY
  cli FLUSHALL >/dev/null
  cli CONFIG RESETSTAT >/dev/null
  mem0=$(cli INFO memory | tr -d '\r' | sed -n 's/^used_memory://p')
  t0=$(date +%s.%N)
  ./build/apps/loadgen --workload "$W" --config bp --speedup "$SPEEDUP" --processes "$PROCESSES" \
    --upstream "$BP_MOCKAPI_URL" --valkey "$BP_VALKEY_URL" --out "$OUT" --no-figures >"$OUT/loadgen-$L.log"
  t1=$(date +%s.%N)
  # The run's target: its state hash is the only one on the flushed server.
  key=$(cli --scan --pattern 'bp:{*}:state' | head -1)
  [ -n "$key" ] || die "no gate state found after the L=$L run"
  p=${key%:state}
  copy="$p:nonqueue"
  nonq=$(cli EVAL "local t = redis.call('HGETALL', KEYS[1]); local n = 0
    for i = 1, #t, 2 do if string.sub(t[i], 1, 2) ~= 'q:' then
      redis.call('HSET', KEYS[2], t[i], t[i + 1]); n = n + 1 end end
    return n" 2 "$key" "$copy")
  hlen=$(cli HLEN "$key")
  st=$(cli MEMORY USAGE "$key" SAMPLES 0)
  cp=$(cli MEMORY USAGE "$copy" SAMPLES 0)
  cli DEL "$copy" >/dev/null
  zs=0
  for z in bl bx seen; do
    m=$(cli MEMORY USAGE "$p:$z" SAMPLES 0)
    zs=$((zs + ${m:-0}))
  done
  seen=$(cli ZCARD "$p:seen")
  mem1=$(cli INFO memory | tr -d '\r' | sed -n 's/^used_memory://p')
  ev=$(cli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha://p')
  summary=$(ls "$OUT"/scale-"$L"/bp/r0/summary.json)
  python3 - "$L" "$summary" "$hlen" "$nonq" "$st" "$cp" "$zs" "$seen" "$mem0" "$mem1" "$ev" \
    "$t0" "$t1" >>"$ROWS" <<'PY'
import json, sys
L, path = int(sys.argv[1]), sys.argv[2]
hlen, nonq, st, cp, zs, seen, mem0, mem1 = (int(x) for x in sys.argv[3:11])
ev = dict(kv.split("=") for kv in sys.argv[11].split(","))
s = json.load(open(path))
heavy = [t for t in s["tenants"] if t["id"].startswith("heavy-")]
light = [t for t in s["tenants"] if t["id"].startswith("light-")]
ach = lambda ts: sum(t["ok_rps"] for t in ts) / max(1e-12, sum(t["ideal_rps"] for t in ts))
queues = hlen - nonq
print(json.dumps({
    "lights": L, "tenants": len(s["tenants"]), "wall_s": float(sys.argv[13]) - float(sys.argv[12]),
    "admit_p50_ms": s["gate_admit_real_ms"]["p50_ms"], "admit_p99_ms": s["gate_admit_real_ms"]["p99_ms"],
    "admits": s["gate_admit_real_ms"]["count"],
    "evalsha_us": float(ev["usec_per_call"]), "evalsha_calls": int(ev["calls"]),
    "ok_calls": s["ok_calls"], "ok_rps": s["ok_rps_window"], "share_429": s["share_429"],
    "heavy_ach": [round(t["achievement"], 3) for t in heavy], "heavy_ideal": heavy[0]["ideal_rps"],
    "heavy_ok_rps": [round(t["ok_rps"], 2) for t in heavy],
    "light_ach": ach(light), "never_served": s["tenants_never_served"],
    "queues": queues, "seen": seen, "bytes_per_queue": (st - cp + zs) / max(1, queues),
    "used_memory_growth": mem1 - mem0, "fail_opens": s["gate_fail_opens"]}))
PY
  tail -1 "$ROWS"
done

python3 - "$ROWS" "$OUT/scale.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
o = ["| light tenants | Admit p50 / p99 ms (client) | EVALSHA us (server) | Admit calls / OK | OK req/s | 429 share | heavy achievement (share req/s) | lights together | never served | active queues | bytes / queue | used_memory growth | fail-opens |",
     "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    o.append("| %d | %.3f / %.3f | %.1f | %.1f | %.1f | %.2f %% | %s (%.2f) | %.2f | %d | %d | %.0f | %.1f MB | %d |" % (
        r["lights"], r["admit_p50_ms"], r["admit_p99_ms"], r["evalsha_us"],
        r["admits"] / max(1, r["ok_calls"]), r["ok_rps"], 100 * r["share_429"],
        " / ".join("%.2f" % a for a in r["heavy_ach"]), r["heavy_ideal"], r["light_ach"],
        r["never_served"], r["queues"], r["bytes_per_queue"], r["used_memory_growth"] / 1e6,
        r["fail_opens"]))
open(sys.argv[2], "w").write("\n".join(o) + "\n")
print("\n".join(o))
PY
echo "table: $OUT/scale.md; runs: $OUT/scale-<L>/bp/r0/ (summary.json, table.md)"
