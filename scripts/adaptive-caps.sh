#!/usr/bin/env bash
# Adaptive caps (README "Adaptive caps"): bp with the gate's learned caps off
# and on, against the real mockapi and Valkey (both started here on free
# loopback ports and stopped on exit), in two situations the paper assumes
# away:
#   halved  the upstream allows 30 req/s while the gate is configured for 60
#           (configs/adaptive/halved-adapt-{off,on}.json: gate.cap_factor 2);
#   shared  the upstream allows 60 req/s and an ungated client sends 12 req/s
#           (20 %) of it on the same key (a paced Python loop, bounded by
#           --shared-max-s real seconds, stopped when loadgen ends).
# Then prints, per run: the 429 share over the whole run and after settling
# (attempts sent from --settle-s paper seconds on), and achievement-Jain
# (against the upstream's real cap; for shared, the gated tenants only, the
# ideal scaled to the capacity left, which Jain ignores as it is scale-free).
set -euo pipefail
cd "$(dirname "$0")/.."

SPEEDUP=5
OUT=""
CASES="halved,shared"
SETTLE_S=20
SHARED_MAX_S=300
SETUP=1
usage() {
  cat <<'EOF'
usage: scripts/adaptive-caps.sh [--case halved,shared] [--speedup F] [--settle-s S]
                                [--out DIR] [--no-setup]
  bp with adaptive caps off and on (1 run each), 429 share after S paper
  seconds (default 20) and achievement-Jain. About 4 minutes at speedup 5.
EOF
}
while [ "$#" -gt 0 ]; do
  case "$1" in
    --case) CASES="$2"; shift 2 ;;
    --speedup) SPEEDUP="$2"; shift 2 ;;
    --settle-s) SETTLE_S="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --shared-max-s) SHARED_MAX_S="$2"; shift 2 ;;
    --no-setup) SETUP=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; echo "unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ "$SPEEDUP" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "--speedup must be a number" >&2; exit 2; }
[ -n "$OUT" ] || OUT="results/adaptive-$(date -u +%Y%m%dT%H%M%SZ)"
if [ "$SETUP" -eq 1 ]; then BP_WERROR="${BP_WERROR:-ON}" ./scripts/setup.sh; fi
for b in build/apps/loadgen build/apps/mockapi; do
  [ -x "$b" ] || { echo "$b is not built (run scripts/setup.sh)" >&2; exit 1; }
done

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
bp_start_valkey
bp_start_mockapi configs/mockapi/paper-multi.json
mkdir -p "$OUT"
echo "adaptive caps: speedup $SPEEDUP, git $(git rev-parse --short HEAD 2>/dev/null || echo ?)," \
  "valkey $BP_VALKEY_URL, upstream $BP_MOCKAPI_URL" | tee "$OUT/run-info.txt"

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
      python3 - "$BP_MOCKAPI_URL" "$(python3 -c "print(12 * $SPEEDUP)")" "$SHARED_MAX_S" \
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
    *) echo "unknown case '$c'" >&2; exit 2 ;;
  esac
done

python3 - "$OUT" "$SETTLE_S" <<'PY' | tee "$OUT/adaptive.md"
import csv, json, os, sys
out, settle_ms = sys.argv[1], float(sys.argv[2]) * 1000
print("| workload | 429 share (all) | 429 share after %g s | OK req/s (window) | achievement-Jain |" % (settle_ms / 1000))
print("|---|---|---|---|---|")
for w in sorted(os.listdir(out)):
    run = os.path.join(out, w, "bp", "r0")
    if not os.path.isfile(os.path.join(run, "summary.json")):
        continue
    s = json.load(open(os.path.join(run, "summary.json")))
    n = n429 = 0
    for a in csv.DictReader(open(os.path.join(run, "attempts.csv"))):
        if a["status"] == "0" or a["proxy_local"] == "1" or float(a["send_ms"]) < settle_ms:
            continue
        n += 1
        n429 += a["status"] == "429"
    after = "%.1f %% (%d / %d)" % (100.0 * n429 / n, n429, n) if n else "-"
    print("| %s | %.1f %% | %s | %.1f | %.3f |" % (w, 100 * s["share_429"], after,
          s["ok_rps_window"], s["achievement_jain"]))
PY
echo "results in $OUT"
