#!/usr/bin/env bash
# The worker examples of docs/clients.md as written: scripts/stack.sh up, a
# target's caps set with bpctl, then the Python and the Node worker side by
# side on that target, each given the declared configuration bpctl export
# writes, as README runs them; both also refuse bad flags by name. Each must
# finish every call through the gate (ok = calls, no fail-open, no reject)
# and both must together stay under the caps (no 429 from mockapi). The gate
# timeout is 2 s: a loaded test machine must not turn slow answers into
# fail-opens. Usage: tests/clients/examples_test.sh BUILD_DIR
# Exits 77 (skipped) only when clients/node/node_modules is absent.
set -uo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
export BP_BUILD_DIR="$1"
export BP_STACK_DIR
BP_STACK_DIR="$(mktemp -d -t bp-examples-test.XXXXXX)"
if [ ! -d "$SRC/clients/node/node_modules/openai" ]; then
  echo "SKIP: clients/node/node_modules is absent; run 'npm ci' in clients/node (scripts/test.sh does)"
  exit 77
fi
cleanup() { "$SRC/scripts/stack.sh" down >/dev/null 2>&1 || true; rm -rf "$BP_STACK_DIR"; }
trap cleanup EXIT
cd "$SRC"
eval "$(timeout 60 scripts/stack.sh up 2>/dev/null)" || { echo "FAIL: stack up"; exit 1; }
# (bpctl builds that refuse to make a new target without --create take it.)
bpctl --target demo set cap --rpm 600 --tpm 60000 >/dev/null 2>&1 ||
  bpctl --target demo --create set cap --rpm 600 --tpm 60000 >/dev/null ||
  { echo "FAIL: bpctl set cap"; exit 1; }
# The declared configuration, as README's example passes it: the workers
# must read every field bpctl export writes.
declared="$BP_STACK_DIR/demo.json"
bpctl --target demo export >"$declared" || { echo "FAIL: bpctl export"; exit 1; }
# A bad flag is refused by name with exit 2, before any call, by both.
for w in "/usr/bin/python3 clients/python/examples/worker.py" "node clients/node/examples/worker.mjs"; do
  for bad in "--slots 0" "--calls=-5" "--timeout-ms=-1" "--ahead-ms=-1"; do
    err=$(timeout 30 $w --target demo $bad 2>&1 >/dev/null); rc=$?
    flag=${bad%% *}; flag=${flag%%=*}
    if [ "$rc" != 2 ] || [[ "$err" != *"$flag must be"* ]] || [[ "$err" == *Traceback* ]] || [[ "$err" == *"    at "* ]]; then
      echo "FAIL: $w $bad: exit $rc, want 2 and a message naming $flag; stderr: $err"; exit 1
    fi
  done
done
py_out="$BP_STACK_DIR/py.json"
timeout 120 /usr/bin/python3 clients/python/examples/worker.py --target demo --tenant acme --calls 10 --timeout-ms 2000 --declared-config "$declared" >"$py_out" &
py=$!
node_line=$(timeout 120 node clients/node/examples/worker.mjs --target demo --tenant beta --calls 10 --timeout-ms 2000 --declared-config "$declared")
wait "$py"
py_line=$(cat "$py_out")
echo "python: $py_line"
echo "node:   $node_line"
fails=0
for line in "$py_line" "$node_line"; do
  /usr/bin/python3 - "$line" <<'PY' || fails=$((fails + 1))
import json, sys
t = json.loads(sys.argv[1])
want = {"ok": 10, "throttled": 0, "rejects": 0, "errors": 0, "fail_opens": 0, "tokens": 1800}
bad = {k: (t.get(k), v) for k, v in want.items() if t.get(k) != v}
sys.exit(f"FAIL {t.get('client')}: got, want {bad}" if bad else 0)
PY
done
[ "$fails" -eq 0 ] && echo "ok: both workers finished every call through the gate" || exit 1
