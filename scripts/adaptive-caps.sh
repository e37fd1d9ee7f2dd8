#!/usr/bin/env bash
# Adaptive caps (docs/gate.md, "Adaptive caps"): bp with the gate's learned caps off
# and on, against the real mockapi and Valkey (both started here on free
# loopback ports and stopped on exit), in two situations the paper assumes
# away:
#   halved  the upstream allows 30 req/s while the gate is configured for 60
#           (configs/adaptive/halved-adapt-{off,on}.json: gate.cap_factor 2);
#   shared  the upstream allows 60 req/s and an ungated client sends 12 req/s
#           (20 %) of it on the same key (a paced Python loop, bounded by
#           --shared-max-s real seconds, stopped when loadgen ends);
#   midrun  the upstream allows 60 req/s, and 30 paper seconds into each run
#           this script halves it (PUT /admin/config) without telling the gate.
# Then prints, per run: the 429 share over the whole run and after settling
# (attempts sent from --settle-s paper seconds on; midrun: the 20 paper
# seconds from 5 s after the change), and achievement-Jain over the
# contention window (Jain is scale-free, so against the real cap: for shared
# the capacity left, for midrun the cap before and after the change).
set -euo pipefail
cd "$(dirname "$0")/.."

SPEEDUP=5
OUT=""
CASES="halved,shared,midrun"
MIDRUN_AT_S=30
SETTLE_S=20
SHARED_MAX_S=300
SETUP=1
ANALYZE_ONLY=0
usage() {
  cat <<'EOF'
usage: scripts/adaptive-caps.sh [--case halved,shared,midrun] [--speedup F] [--settle-s S]
                                [--out DIR] [--no-setup] | --analyze-only DIR
  bp with adaptive caps off and on (1 run each) in each case (default all
  three), 429 share after S paper seconds (default 20; midrun: 5-25 s after
  the change) and achievement-Jain. About 6 minutes at speedup 5.
EOF
}
die() { echo "adaptive-caps: $*" >&2; exit 2; }
# shellcheck source=lib/flags.sh
source scripts/lib/flags.sh  # need_arg, bp_check_speedup
while [ "$#" -gt 0 ]; do
  case "$1" in
    --case) need_arg "$@"; CASES="$2"; shift 2 ;;
    --speedup) need_arg "$@"; SPEEDUP="$2"; shift 2 ;;
    --settle-s) need_arg "$@"; SETTLE_S="$2"; shift 2 ;;
    --out) need_arg "$@"; OUT="$2"; shift 2 ;;
    --shared-max-s) need_arg "$@"; SHARED_MAX_S="$2"; shift 2 ;;
    --no-setup) SETUP=0; shift ;;
    --analyze-only) need_arg "$@"; ANALYZE_ONLY=1; OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done
# Everything is checked before setup.sh builds or any server starts.
bp_check_speedup "$SPEEDUP"  # what loadgen takes (scripts/lib/flags.sh)
positive='^([0-9]+([.][0-9]*)?|[.][0-9]+)$'
[[ "$SETTLE_S" =~ $positive ]] || die "--settle-s must be a number >= 0, got '$SETTLE_S'"
[[ "$SHARED_MAX_S" =~ $positive ]] && awk -v s="$SHARED_MAX_S" 'BEGIN { exit !(s > 0) }' ||
  die "--shared-max-s must be a positive number, got '$SHARED_MAX_S'"
for c in ${CASES//,/ }; do
  case "$c" in halved|shared|midrun) ;; *) die "unknown case '$c' (halved, shared, midrun)" ;; esac
done
[ -n "${CASES//,/}" ] || die "--case needs at least one of halved, shared, midrun"
if [ "$ANALYZE_ONLY" -eq 1 ] && [ ! -d "$OUT" ]; then
  die "--analyze-only: no results folder '$OUT'"
fi
[ -n "$OUT" ] || OUT="results/adaptive-$(date -u +%Y%m%dT%H%M%SZ)"
if [ "$ANALYZE_ONLY" -eq 1 ]; then CASES=""; SETUP=0; fi
if [ "$SETUP" -eq 1 ]; then BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh --apps; fi
for b in build/apps/loadgen build/apps/mockapi; do
  [ -x "$b" ] || { echo "$b is not built (run scripts/setup.sh)" >&2; exit 1; }
done

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
if [ -n "$CASES" ]; then
  bp_start_valkey
  bp_start_mockapi configs/mockapi/paper-multi.json
  mkdir -p "$OUT"
  echo "adaptive caps: speedup $SPEEDUP, git $(git rev-parse --short HEAD 2>/dev/null || echo ?)," \
    "valkey $BP_VALKEY_URL ($BP_SERVER_DESC), upstream $BP_MOCKAPI_URL" | tee -a "$OUT/run-info.txt"
fi

run_loadgen() {  # name
  ./build/apps/loadgen --workload "configs/adaptive/$1-adapt-off.json" \
    --workload "configs/adaptive/$1-adapt-on.json" --config bp --repeats 1 \
    --speedup "$SPEEDUP" --upstream "$BP_MOCKAPI_URL" --valkey "$BP_VALKEY_URL" \
    --out "$OUT" --no-figures >"$OUT/$1-loadgen.log" 2>&1
}

for c in ${CASES//,/ }; do
  case "$c" in
    halved) run_loadgen halved ;;
    shared)
      # 12 paper req/s = 12 * speedup real req/s, 4 keep-alive threads.
      python3 - "$BP_MOCKAPI_URL" "$(python3 -c "import sys; print(12 * float(sys.argv[1]))" "$SPEEDUP")" "$SHARED_MAX_S" \
        >"$OUT/ungated.txt" 2>&1 <<'PY' &
import http.client, signal, sys, threading, time, collections
url, rate, max_s = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
host, port = url.split("//")[1].split(":")
body = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":5}'
counts, lock, end = collections.Counter(), threading.Lock(), time.time() + max_s
stop = threading.Event()  # SIGTERM (background jobs ignore SIGINT) or max_s
signal.signal(signal.SIGTERM, lambda *_: stop.set())
def sender(offset):
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    nxt = time.time() + offset
    while time.time() < end and not stop.is_set():
        if stop.wait(max(0.0, nxt - time.time())): break
        nxt += 4.0 / rate
        try:
            conn.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
            r = conn.getresponse(); r.read(); st = r.status
        except Exception:
            conn.close(); conn = http.client.HTTPConnection(host, int(port), timeout=5); st = 0
        with lock: counts[st] += 1
threads = [threading.Thread(target=sender, args=(i / rate,), daemon=True) for i in range(4)]
for t in threads: t.start()
while any(t.is_alive() for t in threads):
    stop.wait(0.2)
print("ungated answers by status:", dict(counts), flush=True)
PY
      UNGATED=$!
      BP_STARTED_PIDS+=("$UNGATED")
      run_loadgen shared || true
      kill -TERM "$UNGATED" 2>/dev/null || true
      wait "$UNGATED" 2>/dev/null || true
      cat "$OUT/ungated.txt"
      ;;
    midrun)
      # For each run: wait for its start in the log, then halve the limit at
      # MIDRUN_AT_S paper seconds (window_s scaled like loadgen's own PUT).
      (
        for a in off on; do
          for _ in $(seq 1 600); do
            grep -q "midrun-adapt-$a bp #0: gate target" "$OUT/midrun-loadgen.log" 2>/dev/null && break
            sleep 0.1
          done
          sleep "$(python3 -c "import sys; print(float(sys.argv[1]) / float(sys.argv[2]))" "$MIDRUN_AT_S" "$SPEEDUP")"
          curl -sS -X PUT "$BP_MOCKAPI_URL/admin/config" -H 'content-type: application/json' \
            -d "{\"limits\":[{\"dimension\":\"requests\",\"algorithm\":\"fixed_window\",\"limit\":30,\"window_s\":$(python3 -c "import sys; print(1 / float(sys.argv[1]))" "$SPEEDUP")}]}" \
            >/dev/null && echo "midrun-adapt-$a: upstream halved at paper ${MIDRUN_AT_S} s"
        done
      ) >"$OUT/midrun-changes.txt" 2>&1 &
      CHANGER=$!
      BP_STARTED_PIDS+=("$CHANGER")
      run_loadgen midrun || true
      wait "$CHANGER" 2>/dev/null || true
      cat "$OUT/midrun-changes.txt"
      ;;
    *) echo "unknown case '$c'" >&2; exit 2 ;;
  esac
done

python3 - "$OUT" "$SETTLE_S" "$MIDRUN_AT_S" <<'PY' | tee "$OUT/adaptive.md"
import csv, json, os, sys
out, settle_ms, change_ms = sys.argv[1], float(sys.argv[2]) * 1000, float(sys.argv[3]) * 1000
print("| workload | 429 share (all) | 429 share after settling | OK req/s (window) | achievement-Jain | achievement-Jain after settling |")
print("|---|---|---|---|---|---|")
def settled_jain(rows, work, lo, hi):
    # Tenants with attempts in [lo, hi) were backlogged there; up to the first
    # of them to send its last attempt, each should get OK calls in proportion
    # to w_t * omega_k (WFQ on requests; the cap cancels out of Jain).
    last = {}
    for a in rows:
        last[a["tenant"]] = max(last.get(a["tenant"], 0.0), float(a["send_ms"]))
    present = {a["tenant"] for a in rows if lo <= float(a["send_ms"]) < hi}
    end = min([hi] + [last[t] for t in present])
    omega = work.get("priority_weights", [0.5, 0.3, 0.2])
    weight = {t["id"]: t.get("weight", 1.0) * omega[t["priority"] - 1] for t in work["tenants"]}
    ok = dict.fromkeys(present, 0)
    for a in rows:
        if a["tenant"] in ok and a["status"] == "200" and lo <= float(a["send_ms"]) < end:
            ok[a["tenant"]] += 1
    r = [ok[t] / weight[t] for t in ok]
    if not r or sum(x * x for x in r) == 0:
        return "-"
    return "%.3f (paper %.1f-%.1f s)" % (sum(r) ** 2 / (len(r) * sum(x * x for x in r)), lo / 1000, end / 1000)
for w in sorted(os.listdir(out)):
    run = os.path.join(out, w, "bp", "r0")
    if not os.path.isfile(os.path.join(run, "summary.json")):
        continue
    s = json.load(open(os.path.join(run, "summary.json")))
    n = n429 = 0
    lo, hi = settle_ms, float("inf")
    rows = list(csv.DictReader(open(os.path.join(run, "attempts.csv"))))
    if w.startswith("midrun"):
        # The change lands a moment after MIDRUN_AT_S (the run clock starts
        # after setup): take its time from the data, the first 429 of the
        # first paper second from MIDRUN_AT_S on with >= 10 of them (the gate
        # then admits at twice the new cap: about 30 429s per second; before,
        # at most a few at a window edge).
        sent = sorted(float(a["send_ms"]) for a in rows
                      if a["status"] == "429" and float(a["send_ms"]) >= change_ms)
        at = change_ms
        for i in range(len(sent) - 9):
            if sent[i + 9] - sent[i] < 1000:
                at = sent[i]
                break
        lo, hi = at + 5000, at + 25000
    work = json.load(open(os.path.join("configs/adaptive", w + ".json")))
    jain_after = settled_jain(rows, work, lo, hi)
    for a in rows:
        if a["status"] == "0" or a["proxy_local"] == "1" or not lo <= float(a["send_ms"]) < hi:
            continue
        n += 1
        n429 += a["status"] == "429"
    after = "%.1f %% (%d / %d, paper %.1f-%s s)" % (100.0 * n429 / n, n429, n, lo / 1000,
        "end" if hi == float("inf") else "%.1f" % (hi / 1000)) if n else "-"
    print("| %s | %.1f %% | %s | %.1f | %.3f | %s |" % (w, 100 * s["share_429"], after,
          s["ok_rps_window"], s["achievement_jain"], jain_after))
PY
echo "results in $OUT"
