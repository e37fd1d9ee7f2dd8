#!/usr/bin/env bash
# CI smoke of the main job: scripts/experiment.sh on a shortened
# cross-priority-streaming workload (half of every tenant's calls streamed,
# some P3 streams cut short) at a high speedup (a few seconds per
# configuration), then checks that it completed, wrote its report and
# figures-independent outputs, that every configuration streamed and cut
# streams, and that it left no server process behind.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="$(mktemp -d -t bp-smoke.XXXXXX)"
trap 'rm -rf "$OUT"' EXIT

# The cross-priority-streaming workload (cross-priority's tenants and mean
# service time, plain and streamed calls mixed) with a fifth of the work: a
# few paper seconds of contention are enough to see every configuration run
# both kinds of call end to end.
python3 - "$OUT/cross-priority-streaming-short.json" <<'PY'
import json, sys
w = json.load(open("configs/workloads/cross-priority-streaming.json"))
w["name"] = "cross-priority-streaming-short"
for t in w["tenants"]:
    t["workflows"] = max(t["concurrency"], t["workflows"] // 5)
json.dump(w, open(sys.argv[1], "w"), indent=1)
PY

# One pgrep per name: pgrep matches nothing for a pattern over 15 characters.
our_servers() { for n in mockapi redis-server valkey-server; do pgrep -x -u "$(id -u)" "$n" || true; done | sort; }
pids_before="$(our_servers)"

start=$(date +%s)
scripts/experiment.sh --no-setup --workload "$OUT/cross-priority-streaming-short.json" \
  --config naive,tn,litellm,bp --speedup 10 --out "$OUT/results" --no-figures
echo "smoke: experiment took $(( $(date +%s) - start )) s"

# The same on a 3-primary Redis Cluster (experiment.sh --cluster), bp only.
start=$(date +%s)
scripts/experiment.sh --no-setup --cluster --workload "$OUT/cross-priority-streaming-short.json" \
  --config bp --speedup 10 --out "$OUT/results-cluster" --no-figures
echo "smoke: cluster experiment took $(( $(date +%s) - start )) s"

fail=0
check() { if [ -s "$1" ]; then echo "smoke: ok $1"; else echo "smoke: MISSING $1" >&2; fail=1; fi; }
check "$OUT/results/comparison.md"
check "$OUT/results/run-info.txt"
check "$OUT/results/cross-priority-streaming-short/report.md"
check "$OUT/results-cluster/cross-priority-streaming-short/bp/r0/summary.json"
for c in naive tn litellm bp; do
  check "$OUT/results/cross-priority-streaming-short/$c/r0/summary.json"
done
# Every configuration read streamed answers to their usage and cut some short
# (the run summary's "stream" section: streamed 200 answers, cut ones, TTFT).
for c in naive tn litellm bp; do
  f="$OUT/results/cross-priority-streaming-short/$c/r0/summary.json"
  [ -s "$f" ] || continue
  if python3 - "$f" <<'PY'; then echo "smoke: ok $c streamed"; else fail=1; fi
import json, sys
s = json.load(open(sys.argv[1])).get("stream", {})
n, cut, ttft = s.get("streamed", 0), s.get("cut", 0), s.get("ttft", {}).get("count", 0)
if n == 0 or cut == 0 or ttft != n:
    sys.exit(f"smoke: {sys.argv[1]}: streamed {n}, cut {cut}, TTFT samples {ttft}")
PY
done
grep -q 'streamed: TTFT p95' "$OUT/results/comparison.md" ||
  { echo "smoke: comparison.md has no streamed TTFT row" >&2; fail=1; }

sleep 0.5
pids_after="$(our_servers)"
left="$(comm -13 <(echo "$pids_before") <(echo "$pids_after") | grep -v '^$' || true)"
if [ -n "$left" ]; then
  echo "smoke: processes left behind:" >&2
  ps -o pid,args -p $left >&2 || true
  fail=1
fi
[ "$fail" -eq 0 ] && echo "smoke: passed"
exit "$fail"
