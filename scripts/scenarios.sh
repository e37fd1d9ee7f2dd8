#!/usr/bin/env bash
# The scenarios (configs/scenarios/*.json): runs each under naive
# and bp against a Valkey/Redis and a mockapi it starts itself on free
# loopback ports (scripts/lib/servers.sh), passes loadgen the Valkey pid file
# so state_outage events can pause or restart that server, prints the
# issue's target figures per scenario (also written to OUT/targets.md), and
# stops everything it started, also on Ctrl-C or failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ARGS="$*"

usage() {
  cat <<'EOF'
usage: scripts/scenarios.sh [options]

Runs every scenario of configs/scenarios under naive and bp (about 3 minutes
at speedup 5 on 2 cores) and prints the target figures.

options:
  --scenario NAME   one of configs/scenarios/NAME.json (repeatable; default all)
  --config LIST     comma list of configurations (default naive,bp)
  --speedup F       time compression (default 5)
  --out DIR         results folder (default results/scenarios-<UTC time>)
  --no-figures      skip gnuplot
  --no-setup        do not run scripts/setup.sh (binaries must be built)
  --adapt           run bp with the gate's adaptive caps on (copies of the
                    scenarios with "adapt": true in their gate section)
  --gate-breaker-ms MS
                    loadgen --gate-breaker-ms: the gate's circuit-breaker
                    cool-off in real ms, in [0, 60000] (default 1000; 0 = no breaker)
  -h, --help        this help

examples:
  scripts/scenarios.sh
  scripts/scenarios.sh --scenario limits-halved --scenario join-leave --speedup 10
  scripts/scenarios.sh --adapt --scenario limits-halved --scenario outside-traffic
EOF
}

die() { echo "scenarios: $*" >&2; exit 2; }
# shellcheck source=lib/flags.sh
source scripts/lib/flags.sh  # need_arg, bp_check_speedup, bp_check_configs

SCENARIOS=()
CONFIGS=naive,bp
SPEEDUP=5
OUT=""
SETUP=1
ADAPT=0
EXTRA=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --scenario) need_arg "$@"; SCENARIOS+=("$2"); shift 2 ;;
    --config) need_arg "$@"; CONFIGS="$2"; shift 2 ;;
    --speedup) need_arg "$@"; SPEEDUP="$2"; shift 2 ;;
    --out) need_arg "$@"; OUT="$2"; shift 2 ;;
    --no-figures) EXTRA+=(--no-figures); shift ;;
    --no-setup) SETUP=0; shift ;;
    --adapt) ADAPT=1; shift ;;
    --gate-breaker-ms) need_arg "$@"
      [[ "$2" =~ ^[0-9]{1,5}$ ]] && ((10#$2 <= 60000)) ||
        die "--gate-breaker-ms needs a whole number of ms in [0, 60000] (loadgen's range), got '$2'"
      EXTRA+=(--gate-breaker-ms "$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
bp_check_speedup "$SPEEDUP"
# --config is checked here, before setup and server start, as in experiment.sh
# (loadgen checks it again).
bp_check_configs "$CONFIGS"

if [ "${#SCENARIOS[@]}" -eq 0 ]; then
  for f in configs/scenarios/*.json; do SCENARIOS+=("$(basename "$f" .json)"); done
fi
[ -n "$OUT" ] || OUT="results/scenarios-$(date -u +%Y%m%dT%H%M%SZ)"
WORKLOAD_ARGS=()
for s in "${SCENARIOS[@]}"; do
  f="configs/scenarios/$s.json"
  [ -f "$f" ] || die "no scenario '$s' (see configs/scenarios)"
  if [ "$ADAPT" -eq 1 ]; then  # the same scenario with adaptive caps on
    mkdir -p "$OUT/workloads"
    python3 - "$f" "$OUT/workloads/$s.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w.setdefault("gate", {})["adapt"] = True
json.dump(w, open(sys.argv[2], "w"), indent=1)
PY
    f="$OUT/workloads/$s.json"
  fi
  WORKLOAD_ARGS+=(--workload "$f")
done

if [ "$SETUP" -eq 1 ]; then
  BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh --apps
fi
for b in build/apps/loadgen build/apps/mockapi; do
  [ -x "$b" ] || die "$b is not built (run scripts/setup.sh)"
done
command -v python3 >/dev/null 2>&1 || die "python3 is needed to print the target figures"

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
bp_start_valkey
bp_start_mockapi configs/mockapi/paper-single.json

mkdir -p "$OUT"
{
  echo "command: scripts/scenarios.sh $ARGS"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "machine: $(nproc) cores, $(uname -srm)"
  echo "scenarios: ${SCENARIOS[*]}"
  echo "configs: $CONFIGS  speedup: $SPEEDUP  adaptive caps: $([ "$ADAPT" -eq 1 ] && echo on || echo off)"
  echo "valkey: $BP_VALKEY_URL (pid file $BP_VALKEY_PIDFILE)  upstream: $BP_MOCKAPI_URL"
  echo "server: $BP_SERVER_DESC"
} | tee "$OUT/run-info.txt"

./build/apps/loadgen "${WORKLOAD_ARGS[@]}" --config "$CONFIGS" --speedup "$SPEEDUP" \
  --upstream "$BP_MOCKAPI_URL" --valkey "$BP_VALKEY_URL" \
  --valkey-pidfile "$BP_VALKEY_PIDFILE" --quiet --out "$OUT" "${EXTRA[@]}" >"$OUT/loadgen.log"

echo
python3 scripts/lib/scenario_targets.py "$OUT" "$CONFIGS" | tee "$OUT/targets.md"
echo
echo "per run: $OUT/<scenario>/<config>/r0/scenario.md, timeline.png, timeline.csv, summary.json"
