#!/usr/bin/env bash
# The adaptive caps' header rule against AIMD alone (docs/gate.md, "Adaptive
# caps"; results in docs/results.md, "Header-driven caps"): bp with adaptive
# caps on the shipped configs/headers scenarios, each run twice against the
# real mockapi and Valkey (both started here on free loopback ports, stopped
# on exit): as shipped (gate.adapt_headers true: every served call's
# x-ratelimit-remaining/reset goes to the gate) and a copy with
# gate.adapt_headers false (only 429s: AIMD alone).
#   cut-10, cut-30          the provider cuts its request limit to a third
#                           (30 -> 10, 90 -> 30 req/s) at 20 s;
#   outside-10, outside-30  an ungated client takes 30 % of a 10 or 30
#                           req/s cap from 15 s to 45 s.
# Then prints per run the 429 share of the tenants after settling (the
# event's "after" window), their OK req/s there, and for the outside cases
# the first paper second after the client stops from which the tenants' OK
# rate (3 s means) stays >= 90 % of what they attained before the client
# started (paper seconds 5 to 15).
set -euo pipefail
cd "$(dirname "$0")/.."

SPEEDUP=5
OUT=""
PROFILE=""
CASES="cut-10,cut-30,outside-10,outside-30"
usage() {
  cat <<'EOF2'
usage: scripts/header-caps.sh [--case cut-10,cut-30,outside-10,outside-30] [--speedup F]
                              [--profile openai|anthropic|azure|bare] [--out DIR]
                              | --analyze-only DIR
  each case with the header rule and with AIMD alone, 1 run each (about
  15 s per run at speedup 5); prints the targets' figures. --profile sets
  mockapi's provider profile in every case (docs/provider-profiles.md;
  default: the workloads', openai).
EOF2
}
die() { echo "header-caps: $*" >&2; exit 2; }
# shellcheck source=lib/flags.sh
source scripts/lib/flags.sh  # need_arg, bp_check_speedup
ANALYZE_ONLY=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --case) need_arg "$@"; CASES="$2"; shift 2 ;;
    --speedup) need_arg "$@"; SPEEDUP="$2"; shift 2 ;;
    --out) need_arg "$@"; OUT="$2"; shift 2 ;;
    --profile) need_arg "$@"; PROFILE="$2"; shift 2 ;;
    --analyze-only) need_arg "$@"; ANALYZE_ONLY=1; OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
bp_check_speedup "$SPEEDUP"
case "$PROFILE" in ""|openai|anthropic|azure|bare) ;; *) die "unknown profile '$PROFILE'" ;; esac
for c in ${CASES//,/ }; do
  [ -f "configs/headers/$c.json" ] || die "unknown case '$c' (configs/headers/*.json)"
done
[ -n "$OUT" ] || OUT="results/header-caps-$(date -u +%Y%m%dT%H%M%SZ)"
if [ "$ANALYZE_ONLY" -eq 0 ]; then
  for b in build/apps/loadgen build/apps/mockapi; do
    [ -x "$b" ] || { echo "$b is not built (run scripts/setup.sh)" >&2; exit 1; }
  done
  # shellcheck source=lib/servers.sh
  source scripts/lib/servers.sh
  bp_servers_init
  bp_start_valkey
  bp_start_mockapi configs/mockapi/paper-single.json
  mkdir -p "$OUT/workloads"
  {
    echo "command: scripts/header-caps.sh --case $CASES --speedup $SPEEDUP${PROFILE:+ --profile $PROFILE}"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), git: $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
    echo "valkey: $BP_VALKEY_URL ($BP_SERVER_DESC), upstream: $BP_MOCKAPI_URL"
  } | tee "$OUT/run-info.txt"
  ARGS=()
  for c in ${CASES//,/ }; do
    python3 - "configs/headers/$c.json" "$OUT/workloads/$c.json" "$OUT/workloads/$c-aimd.json" \
      "$PROFILE" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
if sys.argv[4]:
    w["upstream"]["profile"] = sys.argv[4]
open(sys.argv[2], "w").write(json.dumps(w, indent=2) + "\n")
w["name"] += "-aimd"
w["gate"]["adapt_headers"] = False
open(sys.argv[3], "w").write(json.dumps(w, indent=2) + "\n")
PY
    ARGS+=(--workload "$OUT/workloads/$c.json" --workload "$OUT/workloads/$c-aimd.json")
  done
  ./build/apps/loadgen "${ARGS[@]}" --config bp --repeats 1 --speedup "$SPEEDUP" \
    --upstream "$BP_MOCKAPI_URL" --valkey "$BP_VALKEY_URL" --quiet --no-figures \
    --out "$OUT" >"$OUT/loadgen.log" 2>&1
fi

python3 - "$OUT" <<'PY' | tee "$OUT/header-caps.md"
import csv, json, os, sys
out = sys.argv[1]
print("| scenario | feed | 429 share after settling | tenants' OK req/s after settling | cap | back to >= 90 % of attainable after the client stops | gate fail-opens |")
print("|---|---|---|---|---|---|---|")
for w in sorted(os.listdir(out)):
    run = os.path.join(out, w, "bp", "r0")
    if not os.path.isfile(os.path.join(run, "summary.json")):
        continue
    s = json.load(open(os.path.join(run, "summary.json")))
    work = json.load(open(os.path.join(out, "workloads", w + ".json")))
    ev = s["scenario"]["events"][0]
    after = ev["after"]
    ev0 = work["events"][0]
    cap = (ev0["limits"][0]["limit"] if ev0["type"] == "upstream_limits"
           else work["upstream"]["limits"][0]["limit"])
    back = "-"
    if ev0["type"] == "outside_traffic":
        # Attainable: the tenants' own OK rate in [5, start) paper s, before
        # the client; recovered: the first second after it stops from which
        # every 3 s mean stays >= 90 % of that.
        start_s, stop_s = ev0["at_s"], work["events"][1]["at_s"]
        ok = {}
        for r in csv.DictReader(open(os.path.join(run, "timeline.csv"))):
            ok[int(float(r["t_s"]))] = sum(float(v) for k, v in r.items() if k.startswith("ok_"))
        att = sum(ok.get(t, 0) for t in range(5, start_s)) / (start_s - 5)
        end = work["run_length_cap_s"] - 1
        mean3 = {t: sum(ok.get(u, 0) for u in range(t, t + 3)) / 3 for t in range(stop_s, end - 2)}
        back = "not within the run (attainable %.1f)" % att
        for t in sorted(mean3):
            if all(mean3[u] >= 0.9 * att for u in mean3 if u >= t):
                back = "%d s (attainable %.1f req/s)" % (t - stop_s, att)
                break
    feed = "AIMD alone" if w.endswith("-aimd") else "headers"
    print("| %s | %s | %.1f %% | %.2f | %g | %s | %s |" % (w.replace("-aimd", ""), feed,
          100 * after["share_429"], after["ok_rps"], cap, back, s["scenario"].get("gate_fail_opens")))
PY
