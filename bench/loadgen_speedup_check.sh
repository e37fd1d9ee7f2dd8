#!/usr/bin/env bash
# Check (not a test): is loadgen, not the system under test, ever the limit at
# a high speedup? Runs one workload under one configuration at a fast and a
# slow speedup (scripts/experiment.sh, which starts its own Valkey and mockapi
# on loopback) and compares every metric of summary.json: the results, in paper
# units, must agree within their 95 % Student-t intervals.
#
#   bench/loadgen_speedup_check.sh
#       # cross-priority, bp, 3 repeats, speedup 10 vs speedup 1 (about 6 minutes)
#   BP_CHECK_WORKLOAD=token-bound BP_CHECK_CONFIG=naive BP_CHECK_SPEEDUPS="10 2" \
#   BP_CHECK_REPEATS=3 bench/loadgen_speedup_check.sh
#
# Per metric it prints mean +- ci95 at both speedups and two verdicts:
# "overlap" (the two intervals overlap) and "diff<ci" (|difference of means|
# <= sqrt(ci_a^2 + ci_b^2), a stricter reading). Exit status 0 always: this
# reports, it asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
WORKLOAD="${BP_CHECK_WORKLOAD:-cross-priority}"
CONFIG="${BP_CHECK_CONFIG:-bp}"
REPEATS="${BP_CHECK_REPEATS:-3}"
read -r FAST SLOW <<<"${BP_CHECK_SPEEDUPS:-10 1}"
OUT="${BP_CHECK_OUT:-results/speedup-check-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT"
echo "speedup check: $WORKLOAD, $CONFIG, $REPEATS repeats, speedup $FAST vs $SLOW; uptime: $(uptime)"
for s in "$FAST" "$SLOW"; do
  scripts/experiment.sh --workload "$WORKLOAD" --config "$CONFIG" --repeats "$REPEATS" \
    --speedup "$s" --no-figures --no-setup --out "$OUT/speedup-$s" >"$OUT/speedup-$s.log" 2>&1 ||
    { echo "experiment at speedup $s failed: $OUT/speedup-$s.log" >&2; exit 1; }
  echo "speedup $s done; uptime: $(uptime)"
done
python3 bench/compare_summaries.py "$CONFIG" \
  "$OUT/speedup-$FAST/$WORKLOAD/summary.json" "$OUT/speedup-$SLOW/$WORKLOAD/summary.json" \
  "speedup $FAST" "speedup $SLOW"
