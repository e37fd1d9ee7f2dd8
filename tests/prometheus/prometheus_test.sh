#!/usr/bin/env bash
# The gate's metrics as Prometheus sees them: a Valkey and a mockapi
# (scripts/stack.sh), `bpctl metrics --listen` on a free loopback port,
# Debian's prometheus scraping it every 0.5 s, then a short bp run of loadgen
# (tests/prometheus/workload.json: two classes under a 40 req/s gate in front
# of a 100 req/s upstream, so every admission is one OK call). Checks:
#   - promtool accepts the scrape config and the exposition;
#   - Prometheus' HTTP API: per class, increase() of
#     bp_gate_admitted_calls_total over the run (its rate times the window)
#     is within 5 % of loadgen's OK calls of that class (summary.json);
#   - the run had no fail-open and no upstream 429 (else the counts differ
#     for a reason outside the metrics).
# Exit 77 (ctest: skipped) when prometheus or promtool is not installed
# (scripts/setup.sh installs Debian's prometheus). Bounded: loadgen 120 s,
# every wait 30 s or less. Usage: tests/prometheus/prometheus_test.sh BUILD_DIR
set -uo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "$1" && pwd)"
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  { echo "SKIP: prometheus/promtool not installed (Debian package prometheus)"; exit 77; }
source "$SRC/scripts/lib/servers.sh"  # bp_free_port, bp_wait_port
[ -z "${BP_TMP:-}" ] || rmdir "$BP_TMP" 2>/dev/null || true
work="$(mktemp -d -t bp-prometheus-test.XXXXXX)"
export BP_BUILD_DIR="$BUILD" BP_STACK_DIR="$work/stack"
mkdir -p "$BP_STACK_DIR"
bpctl_pid="" prom_pid="" fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
stop_pid() {  # pid: TERM, then KILL after 5 s
  [ -n "$1" ] || return 0
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null || true
}
cleanup() {
  stop_pid "$prom_pid"
  stop_pid "$bpctl_pid"
  "$SRC/scripts/stack.sh" down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

line=$(timeout 60 "$SRC/scripts/stack.sh" up 2>"$work/stack.err") || { cat "$work/stack.err"; exit 1; }
eval "$line"

mport=$(bp_free_port)
"$BUILD/apps/bpctl" --valkey "$BP_VALKEY_URL" metrics --listen "127.0.0.1:$mport" \
  2>"$work/bpctl.err" &
bpctl_pid=$!
bp_wait_port "$mport" 30 || { cat "$work/bpctl.err"; fail "bpctl metrics did not listen"; exit 1; }
curl -fsS "http://127.0.0.1:$mport/metrics" >"$work/empty.txt" && ok "GET /metrics answers" ||
  fail "GET /metrics"

cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: bp-gate
    static_configs:
      - targets: ['127.0.0.1:$mport']
YML
promtool check config "$work/prometheus.yml" >/dev/null && ok "promtool check config" ||
  fail "promtool check config"
pport=$(bp_free_port)
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!
ready=0
for _ in $(seq 300); do
  curl -fsS "http://127.0.0.1:$pport/-/ready" >/dev/null 2>&1 && { ready=1; break; }
  sleep 0.1
done
[ "$ready" = 1 ] || { tail -20 "$work/prometheus.log"; fail "prometheus not ready in 30 s"; exit 1; }
ok "prometheus ready on 127.0.0.1:$pport"
# Prometheus applies new scrape targets every 5 s: wait for the first
# scrape, so the run's counters are seen from their first samples.
scraped=0
for _ in $(seq 150); do
  curl -fsS -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=up{job="bp-gate"}' \
    2>/dev/null | grep -q '"value"' && { scraped=1; break; }
  sleep 0.2
done
[ "$scraped" = 1 ] || { fail "prometheus did not scrape bpctl in 30 s"; exit 1; }

# --gate-timeout-ms 2000: on a loaded test box a gate call can take longer
# than the default 100 ms; it would fail open, and the run's admissions
# would no longer be its OK calls.
timeout 120 "$BUILD/apps/loadgen" --workload "$SRC/tests/prometheus/workload.json" --config bp \
  --upstream "$BP_MOCKAPI_URL" --valkey "$BP_VALKEY_URL" --out "$work/out" --gate-timeout-ms 2000 \
  >"$work/loadgen.out" 2>&1 || { tail -20 "$work/loadgen.out"; fail "loadgen exited $?"; exit 1; }
summary=$(find "$work/out" -name summary.json -path '*bp*' | head -1)
[ -n "$summary" ] || { fail "no summary.json"; exit 1; }
target=$(grep -o 'gate target "[^"]*"' "$work/loadgen.out" | head -1 | cut -d'"' -f2)
[ -n "$target" ] || { fail "no gate target line in loadgen's output"; exit 1; }
sleep 5  # ten more scrapes of the final counters

curl -fsS "http://127.0.0.1:$mport/metrics" >"$work/final.txt"
promtool check metrics <"$work/final.txt" >"$work/promtool.out" 2>&1 &&
  ok "promtool check metrics" || { cat "$work/promtool.out"; fail "promtool check metrics"; }

grep "^bp_gate_admitted_calls_total{target=\"$target\"" "$work/final.txt"  # the counters at the end
query="sum by (class) (increase(bp_gate_admitted_calls_total{target=\"$target\"}[5m]))"
curl -fsS -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$query" \
  >"$work/query.json" || fail "query API"
if [ -n "${BP_PROM_DEBUG:-}" ]; then
  for q in "bp_gate_admitted_calls_total{target=\"$target\",class=\"1\"}[5m]" 'up[5m]' 'scrape_duration_seconds[5m]'; do
    curl -fsS -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$q"; echo
  done
fi
python3 - "$summary" "$work/query.json" <<'PY' || fails=$((fails + 1))
import json, sys
summary = json.load(open(sys.argv[1]))
answer = json.load(open(sys.argv[2]))
ok_calls = {}
for t in summary["tenants"]:
    ok_calls[str(t["priority"])] = ok_calls.get(str(t["priority"]), 0) + t["ok_calls"]
prom = {r["metric"]["class"]: float(r["value"][1]) for r in answer["data"]["result"]}
bad = 0
if summary["gate_fail_opens"] != 0 or summary["upstream_429"] != 0:
    print(f"FAIL: fail-opens {summary['gate_fail_opens']}, upstream 429 {summary['upstream_429']}")
    bad += 1
for cls in sorted(ok_calls):
    want, got = ok_calls[cls], prom.get(cls, 0.0)
    diff = abs(got - want) / want if want else 1.0
    verdict = "ok" if diff <= 0.05 else "FAIL"
    print(f"{verdict}: class {cls}: prometheus increase {got:.1f}, loadgen ok calls {want} "
          f"({100 * diff:.2f} %)")
    bad += verdict == "FAIL"
sys.exit(1 if bad else 0)
PY
[ "$fails" = 0 ] && echo "PASS" || echo "$fails failure(s)"
exit $(( fails > 0 ))
