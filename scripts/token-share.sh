#!/usr/bin/env bash
# OK tokens / token cap over the contention window, per run and as the mean
# with a 95 % Student-t half-width per workload and configuration
# (reservation mode's target: >= 90 % of the token cap). Reads what scripts/experiment.sh wrote: each
# run's summary.json (contention_window_s, cap_tokens_per_s) and
# activities.csv (OK activities answered inside the window, prompt +
# completion tokens). Paper units, as the reports.
#
#   scripts/token-share.sh results/reservation-r3
set -euo pipefail

usage() { echo "usage: scripts/token-share.sh RESULTS_DIR (an experiment.sh --out folder)"; }
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then usage; exit 0; fi
[ $# -eq 1 ] || { usage >&2; exit 2; }
[ -d "$1" ] || { echo "token-share.sh: no folder '$1'" >&2; exit 2; }

json_number() {  # file key -> the number after "key":
  sed -n "s/.*\"$2\": *\([0-9.eE+-]*\).*/\1/p" "$1" | head -1
}

found=0
for cfg_dir in "$1"/*/*/; do
  runs=()
  for run in "$cfg_dir"r*/; do
    if [ ! -f "$run/summary.json" ] || [ ! -f "$run/activities.csv" ]; then continue; fi
    window_s=$(json_number "$run/summary.json" contention_window_s)
    cap=$(json_number "$run/summary.json" cap_tokens_per_s)
    if [ -z "$window_s" ] || [ -z "$cap" ] || ! awk -v c="$cap" 'BEGIN { exit !(c > 0) }'; then
      continue  # no token cap: nothing to report
    fi
    share=$(awk -F, -v w="$window_s" -v cap="$cap" '
      NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
      $col["ok"] == 1 && $col["final_answer_ms"] < w * 1000 {
        tok += $col["prompt_tokens"] + $col["completion_tokens"]
      }
      END { printf "%.4f", tok / (cap * w) }' "$run/activities.csv")
    runs+=("$share")
    printf '%s %s\n' "${run%/}" "$share"
    found=1
  done
  [ "${#runs[@]}" -gt 0 ] || continue
  printf '%s\n' "${runs[@]}" | awk -v name="${cfg_dir%/}" '
    { x[NR] = $1; s += $1 }
    END {
      n = NR; m = s / n; v = 0
      for (i = 1; i <= n; ++i) v += (x[i] - m) ^ 2
      # two-sided 95 % Student-t quantiles for n - 1 = 1..9 degrees of freedom
      split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262", t, " ")
      hw = (n > 1 && n <= 10) ? t[n - 1] * sqrt(v / (n - 1) / n) : 0
      printf "%s: OK tokens / cap %.1f %% +- %.1f (n = %d)\n", name, 100 * m, 100 * hw, n
    }'
done
[ "$found" -eq 1 ] || { echo "token-share.sh: no run with a token cap under '$1'" >&2; exit 1; }
