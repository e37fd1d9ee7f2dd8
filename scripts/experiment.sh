#!/usr/bin/env bash
# The main job: reproduce the paper's evaluation (SPEC section 7) with one
# command. Installs and builds what is missing (scripts/setup.sh), starts a
# local Valkey/Redis and mockapi on free loopback ports (unless pointed at
# existing ones), runs loadgen on the chosen workloads and configurations,
# prints the comparison table beside the paper's, writes figures and reports
# under --out, and stops everything it started, also on Ctrl-C or failure.
#
# While it runs, the gate's state can be read and tuned with bpctl: the script
# prints the Valkey URL, and loadgen prints each bp run's gate target
# <workload>-<config>-r<repeat>-<unix ms> when the run starts.
set -euo pipefail
cd "$(dirname "$0")/.."
ARGS="$*"

usage() {
  cat <<'EOF'
usage: scripts/experiment.sh [options]

Default: cross-priority and token-bound under naive, tn, litellm and bp,
1 repeat, speedup 5 (about 3.5 minutes on 2 cores).

options:
  --suite               all nine workloads of Table II, mixed-sizes and the two streaming
                        workloads (token-bound-streaming, cross-priority-streaming), plus the
                        ablations bp-no-drf and bp-no-priority (about 2 hours at speedup 5
                        on 2 cores)
  --workload NAME       a workload from configs/workloads, or a file such as
                        configs/scenarios/join-leave.json (repeatable; replaces the default)
  --config LIST         comma list of naive,tn,litellm,bp,bp-no-drf,bp-no-priority
  --repeats N           repeats per configuration (95 % Student-t intervals need N >= 2)
  --speedup F           time compression (rates x F, durations / F); default 5
  --valkey URL          use this Valkey/Redis instead of starting one
                        (redis://..., unix:///..., or redis+cluster://HOST:PORT,...)
  --cluster             start a 3-primary Valkey/Redis Cluster on loopback instead
                        of one server (gate targets spread over its shards)
  --upstream URL        use this mockapi instead of starting one
  --out DIR             results folder (default results/experiment-<UTC time>)
  --no-figures          skip gnuplot
  --loadgen-arg ARG     pass ARG on to loadgen (repeatable), e.g.
                        --loadgen-arg --litellm-limiter=v1
                        --loadgen-arg --sdk-retry-after-bound=exclusive
  --processes N         run loadgen as N cooperating processes (tenants split, one gate
                        target and upstream, records merged into one report)
  --no-setup            do not run scripts/setup.sh (binaries must be built)
  -h, --help            this help

examples:
  scripts/experiment.sh
  scripts/experiment.sh --suite --repeats 3
  scripts/experiment.sh --workload overload --config naive,bp --speedup 10
  scripts/experiment.sh --workload token-bound --workload token-bound-streaming
  scripts/experiment.sh --valkey redis://127.0.0.1:6379 --upstream http://127.0.0.1:8080
  scripts/experiment.sh --cluster --workload cross-priority --config bp
  scripts/experiment.sh --processes 2 --workload cross-priority --config naive,bp
EOF
}

die() { echo "experiment: $*" >&2; exit 2; }
# shellcheck source=lib/flags.sh
source scripts/lib/flags.sh  # need_arg, bp_check_speedup, bp_check_configs

WORKLOADS=()
CONFIGS=""
REPEATS=1
SPEEDUP=5
VALKEY_URL=""
UPSTREAM_URL=""
OUT=""
SETUP=1
SUITE=0
CLUSTER=0
PROCESSES=1
FIGURES=1
EXTRA=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --suite) SUITE=1; shift ;;
    --workload) need_arg "$@"; WORKLOADS+=("$2"); shift 2 ;;
    --config) need_arg "$@"; CONFIGS="$2"; shift 2 ;;
    --repeats) need_arg "$@"; REPEATS="$2"; shift 2 ;;
    --speedup) need_arg "$@"; SPEEDUP="$2"; shift 2 ;;
    --valkey) need_arg "$@"; VALKEY_URL="$2"; shift 2 ;;
    --upstream) need_arg "$@"; UPSTREAM_URL="$2"; shift 2 ;;
    --out) need_arg "$@"; OUT="$2"; shift 2 ;;
    --no-figures) EXTRA+=(--no-figures); FIGURES=0; shift ;;
    --loadgen-arg) need_arg "$@"; EXTRA+=("$2"); shift 2 ;;
    --no-setup) SETUP=0; shift ;;
    --cluster) CLUSTER=1; shift ;;
    --processes) need_arg "$@"; PROCESSES="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see scripts/experiment.sh --help)" ;;
  esac
done

[[ "$REPEATS" =~ ^[1-9][0-9]*$ ]] || die "--repeats must be a positive integer, got '$REPEATS'"
[[ "$PROCESSES" =~ ^[1-9][0-9]*$ ]] && [ "$PROCESSES" -le 256 ] ||
  die "--processes must be an integer in [1, 256], got '$PROCESSES'"
[ "$PROCESSES" -eq 1 ] || EXTRA+=(--processes "$PROCESSES")
bp_check_speedup "$SPEEDUP"
# The rest of the flags are checked here too, before setup and server start
# (loadgen checks them again: ValidateRunOptions, ParseConfigurationList).
[ -z "$CONFIGS" ] || bp_check_configs "$CONFIGS"
# URL syntax as loadgen parses it (ParseValkeyUrl, ParseHttpUrl).
if [ -n "$VALKEY_URL" ] && ! [[ "$VALKEY_URL" =~ ^redis://([^@/]*@)?([^:/@[]+|\[[0-9a-fA-F:.]+\])(:[0-9]{1,5})?(/[0-9]+)?/?$ || "$VALKEY_URL" =~ ^unix:///. || "$VALKEY_URL" =~ ^redis\+cluster://([^@/]*@)?[^/@]+/?$ ]]; then
  die "--valkey must be redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], unix:///PATH or redis+cluster://HOST:PORT[,HOST:PORT...], got '$VALKEY_URL'"
fi
[ "$CLUSTER" -eq 0 ] || [ -z "$VALKEY_URL" ] || die "--cluster starts its own cluster: give it or --valkey, not both"
if [ -n "$UPSTREAM_URL" ] && ! [[ "$UPSTREAM_URL" =~ ^(http://)?([0-9.]+|localhost|\[[0-9a-fA-F:.]+\]):[0-9]{1,5}/?$ ]]; then
  die "--upstream must be http://HOST:PORT (HOST an IP address or localhost), got '$UPSTREAM_URL'"
fi

ALL_WORKLOADS=(uncongested overload cross-priority request-bound token-bound mixed-dominant
  noisy-estimates reservation reservation-capped mixed-sizes token-bound-streaming
  cross-priority-streaming)
if [ "${#WORKLOADS[@]}" -eq 0 ]; then
  if [ "$SUITE" -eq 1 ]; then WORKLOADS=("${ALL_WORKLOADS[@]}"); else WORKLOADS=(cross-priority token-bound); fi
fi
if [ -z "$CONFIGS" ]; then
  if [ "$SUITE" -eq 1 ]; then CONFIGS=naive,tn,litellm,bp,bp-no-drf,bp-no-priority; else CONFIGS=naive,tn,litellm,bp; fi
fi
WORKLOAD_ARGS=()
for w in "${WORKLOADS[@]}"; do
  f="configs/workloads/$w.json"
  [ -f "$w" ] && f="$w"
  [ -f "$f" ] || die "no workload '$w' (known: ${ALL_WORKLOADS[*]})"
  WORKLOAD_ARGS+=(--workload "$f")
done
[ -n "$OUT" ] || OUT="results/experiment-$(date -u +%Y%m%dT%H%M%SZ)"

if [ "$SETUP" -eq 1 ]; then
  # same warning flags as scripts/test.sh, so switching commands does not
  # rebuild; only the three binaries (the tests are most of the build)
  BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh --apps
fi
for b in build/apps/loadgen build/apps/mockapi; do
  [ -x "$b" ] || die "$b is not built (run scripts/setup.sh)"
done

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
if [ -n "$VALKEY_URL" ]; then
  BP_VALKEY_URL="$VALKEY_URL"
elif [ "$CLUSTER" -eq 1 ]; then
  bp_start_valkey_cluster 3  # scenario outages need one server: not with --cluster
else
  bp_start_valkey
  # scenario workloads with state_outage events pause or restart this server
  EXTRA+=(--valkey-pidfile "$BP_VALKEY_PIDFILE")
fi
if [ -n "$UPSTREAM_URL" ]; then
  BP_MOCKAPI_URL="$UPSTREAM_URL"
else
  # loadgen PUTs each workload's upstream section to /admin/config per run.
  bp_start_mockapi configs/mockapi/paper-multi.json
fi

mkdir -p "$OUT"
{
  echo "command: scripts/experiment.sh $ARGS"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "machine: $(nproc) cores, $(uname -srm)"
  echo "workloads: ${WORKLOADS[*]}"
  echo "configs: $CONFIGS  repeats: $REPEATS  speedup: $SPEEDUP"
  echo "valkey: $BP_VALKEY_URL  upstream: $BP_MOCKAPI_URL"
  echo "server: ${BP_SERVER_DESC:-the one at --valkey, named in each bp run summary.json}"
} | tee "$OUT/run-info.txt"
echo "tune while it runs: build/apps/bpctl --valkey $BP_VALKEY_URL --target <target> status|set ..."
echo "(each bp run prints its gate target when it starts)"

./build/apps/loadgen "${WORKLOAD_ARGS[@]}" --config "$CONFIGS" --repeats "$REPEATS" \
  --speedup "$SPEEDUP" --upstream "$BP_MOCKAPI_URL" --valkey "$BP_VALKEY_URL" \
  --out "$OUT" "${EXTRA[@]}"

echo
if [ "$FIGURES" -eq 1 ]; then
  echo "report: $OUT/comparison.md; per workload: $OUT/<workload>/report.md and figures (*.png)"
else
  echo "report: $OUT/comparison.md; per workload: $OUT/<workload>/report.md (no figures: --no-figures)"
fi
