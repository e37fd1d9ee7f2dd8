#!/usr/bin/env bash
# Soak (not CI): mockapi and the gate under steady load for a bounded time,
# with the resident memory (RSS) of every process sampled, to show whether
# memory grows beyond warm-up. Loopback only; everything it starts is stopped
# at the end, on Ctrl-C or on failure.
#
# Load, both for --duration seconds:
#   - wrk -t1 -c8 POSTs chat completions (bench/wrk_chat.lua) at mockapi A
#     (no limits, zero latency): the HTTP server at full speed;
#   - loadgen runs cross-priority under bp at speedup 10, repeat after repeat,
#     against mockapi B and a local Valkey: the gate client and admit.lua
#     under steady contention (loadgen is stopped when the time is up).
# Output (--out, default results/soak-<UTC time>): rss.csv (one row per
# sample: elapsed_s and RSS in kB of mockapi A, mockapi B, loadgen, Valkey),
# summary.txt (RSS after warm-up, at the end, and the growth), wrk.txt.
#
#   scripts/soak.sh                        # 10 minutes, a sample every 10 s
#   scripts/soak.sh --duration 60 --interval 5
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "soak: $*" >&2; exit 2; }
DURATION=600
INTERVAL=10
OUT=""
SETUP=1
while [ "$#" -gt 0 ]; do
  case "$1" in
    --duration) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "--duration needs whole seconds > 0"
      DURATION="$2"; shift 2 ;;
    --interval) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "--interval needs whole seconds > 0"
      INTERVAL="$2"; shift 2 ;;
    --out) [ -n "${2:-}" ] || die "--out needs a directory"; OUT="$2"; shift 2 ;;
    --no-setup) SETUP=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
[ "$DURATION" -le 7200 ] || die "--duration is at most 7200 s (bounded soak)"
[ "$INTERVAL" -lt "$DURATION" ] || die "--interval must be below --duration"
[ -n "$OUT" ] || OUT="results/soak-$(date -u +%Y%m%dT%H%M%SZ)"
if [ "$SETUP" -eq 1 ]; then BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh --apps; fi
command -v wrk >/dev/null || die "wrk not found (scripts/setup.sh installs it)"
for b in build/apps/loadgen build/apps/mockapi; do [ -x "$b" ] || die "$b is not built"; done

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
mkdir -p "$OUT"
bp_start_valkey
VALKEY_PID="${BP_STARTED_PIDS[-1]}"
bp_start_mockapi configs/mockapi/paper-multi.json --no-limits --zero-latency
WRK_URL="$BP_MOCKAPI_URL"
MOCK_A_PID="${BP_STARTED_PIDS[-1]}"
bp_start_mockapi configs/mockapi/paper-multi.json
MOCK_B_PID="${BP_STARTED_PIDS[-1]}"

wrk -t1 -c8 -d"${DURATION}s" -s bench/wrk_chat.lua "$WRK_URL/v1/chat/completions" \
  >"$OUT/wrk.txt" 2>&1 &
BP_STARTED_PIDS+=($!)
./build/apps/loadgen --workload configs/workloads/cross-priority.json --config bp \
  --repeats 100000 --speedup 10 --upstream "$BP_MOCKAPI_URL" --valkey "$BP_VALKEY_URL" \
  --out "$BP_TMP/loadgen" --no-figures --quiet >"$OUT/loadgen.txt" 2>&1 &
LOADGEN_PID=$!
BP_STARTED_PIDS+=("$LOADGEN_PID")

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
echo "elapsed_s,mockapi_wrk_kb,mockapi_loadgen_kb,loadgen_kb,valkey_kb" >"$OUT/rss.csv"
echo "soak: ${DURATION} s, a sample every ${INTERVAL} s -> $OUT/rss.csv"
start=$(date +%s)
while :; do
  elapsed=$(( $(date +%s) - start ))
  kill -0 "$LOADGEN_PID" 2>/dev/null || die "loadgen stopped early; see $OUT/loadgen.txt"
  echo "$elapsed,$(rss "$MOCK_A_PID"),$(rss "$MOCK_B_PID"),$(rss "$LOADGEN_PID"),$(rss "$VALKEY_PID")" \
    >>"$OUT/rss.csv"
  [ "$elapsed" -ge "$DURATION" ] && break
  sleep "$INTERVAL"
done
sleep 1  # wrk prints its summary as its -d ends

# Warm-up: the first sample at or after min(60 s, duration / 5).
warm=$(( DURATION / 5 < 60 ? DURATION / 5 : 60 ))
awk -F, -v warm="$warm" '
  NR == 1 { for (i = 2; i <= NF; i++) name[i] = $i; next }
  $1 >= warm && !have { have = 1; t0 = $1; for (i = 2; i <= NF; i++) base[i] = $i }
  { t1 = $1; for (i = 2; i <= NF; i++) last[i] = $i; if ($2 + 0 > 0) n++ }
  END {
    printf "RSS after warm-up (t = %d s) and at the end (t = %d s), %d samples:\n", t0, t1, n
    for (i = 2; i <= 5; i++) {
      g = last[i] - base[i]
      pct = (base[i] > 0) ? 100 * g / base[i] : 0
      printf "  %-20s %8d kB -> %8d kB  growth %+d kB (%+.1f %%)\n", name[i], base[i], last[i], g, pct
    }
  }' "$OUT/rss.csv" | tee "$OUT/summary.txt"
grep -E "Requests/sec|requests in" "$OUT/wrk.txt" | tee -a "$OUT/summary.txt" || true
runs=$(find "$BP_TMP/loadgen" -name summary.json 2>/dev/null | wc -l)
echo "loadgen: $runs cross-priority bp runs finished (speedup 10)" | tee -a "$OUT/summary.txt"
