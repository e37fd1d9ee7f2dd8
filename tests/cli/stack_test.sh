#!/usr/bin/env bash
# scripts/stack.sh: `up` starts a Valkey/Redis and a mockapi that answer on the
# URLs it exports, a second `up` starts nothing new, `status` tells, `down`
# stops exactly those processes (and never one that only reuses a recorded
# pid), a second `down` is harmless, and a missing build is named with the
# command that makes it. Usage:
#   tests/cli/stack_test.sh BUILD_DIR
# The stack's state goes to a temporary folder (BP_STACK_DIR), never .stack/.
set -uo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
export BP_BUILD_DIR="$1"
export BP_STACK_DIR
BP_STACK_DIR="$(mktemp -d -t bp-stack-test.XXXXXX)"
STACK="$SRC/scripts/stack.sh"
source "$SRC/scripts/lib/servers.sh"  # bp_cli_bin
[ -z "${BP_TMP:-}" ] || rmdir "$BP_TMP" 2>/dev/null || true
CLI=$(bp_cli_bin) || exit 1
fails=0
decoy=""

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

cleanup() {
  "$STACK" down >/dev/null 2>&1 || true
  [ -z "$decoy" ] || kill "$decoy" 2>/dev/null || true
  rm -rf "$BP_STACK_DIR"
}
trap cleanup EXIT

# 1. up prints one export line and both servers answer on its URLs.
line=$(timeout 60 "$STACK" up 2>/dev/null) || fail "up exited $?"
case "$line" in
  "export BP_VALKEY_URL=redis://127.0.0.1:"*" BP_MOCKAPI_URL=http://127.0.0.1:"*) ok "up: $line" ;;
  *) fail "up printed '$line'" ;;
esac
eval "$line"
vport=${BP_VALKEY_URL##*:}
[ "$("$CLI" -h 127.0.0.1 -p "$vport" PING)" = PONG ] && ok "valkey PONG" || fail "valkey did not answer PING"
[ "$(curl -fsS "$BP_MOCKAPI_URL/healthz")" != "" ] && ok "mockapi /healthz" || fail "mockapi /healthz"
vpid=$(cat "$BP_STACK_DIR/valkey.pid")
mpid=$(cat "$BP_STACK_DIR/mockapi.pid")
kill -0 "$vpid" && kill -0 "$mpid" || fail "pids $vpid $mpid not alive"

# 2. A second up starts nothing and prints the same URLs.
again=$(timeout 60 "$STACK" up 2>/dev/null)
# (PATH is left out once the first line's eval put build/apps on it.)
[ "${again%% PATH=*}" = "${line%% PATH=*}" ] && ok "second up: same URLs" || fail "second up printed '$again'"
[ "$(cat "$BP_STACK_DIR/valkey.pid")" = "$vpid" ] && [ "$(cat "$BP_STACK_DIR/mockapi.pid")" = "$mpid" ] &&
  ok "second up: same pids" || fail "second up changed the pids"
mport=${BP_MOCKAPI_URL##*:}
n=$(pgrep -c -f -- "apps/mockapi --host 127.0.0.1 --port $mport\$" || true)
[ "$n" = 1 ] && ok "one mockapi on port $mport" || fail "$n mockapi processes on port $mport"

# 3. status: both running, exit 0.
"$STACK" status >/dev/null && ok "status exit 0" || fail "status exited $? while running"

# 4. down stops both; their pids are gone; status exit 3; down again exit 0.
"$STACK" down 2>/dev/null || fail "down exited $?"
for _ in $(seq 1 50); do kill -0 "$vpid" 2>/dev/null || kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$vpid" 2>/dev/null && fail "valkey pid $vpid alive after down" || ok "valkey pid $vpid gone"
kill -0 "$mpid" 2>/dev/null && fail "mockapi pid $mpid alive after down" || ok "mockapi pid $mpid gone"
"$STACK" status >/dev/null; rc=$?
[ "$rc" = 3 ] && ok "status after down: exit 3" || fail "status after down exited $rc"
"$STACK" down 2>/dev/null && ok "second down: exit 0" || fail "second down exited $?"

# 5. A pidfile naming a process the stack did not start (a reused pid): down
# leaves it alone.
sleep 300 &
decoy=$!
echo "$decoy" > "$BP_STACK_DIR/mockapi.pid"
echo 1 > "$BP_STACK_DIR/mockapi.started"
"$STACK" down 2>/dev/null
kill -0 "$decoy" 2>/dev/null && ok "down spared pid $decoy it did not start" || fail "down killed pid $decoy"

# 6. No build: up names the missing binary and the command that makes it.
err=$(BP_BUILD_DIR=/nonexistent "$STACK" up 2>&1 >/dev/null); rc=$?
[ "$rc" = 1 ] && [[ "$err" == *"/nonexistent/apps/mockapi not found: run scripts/setup.sh first"* ]] &&
  ok "no build: $err" || fail "no build: exit $rc, '$err'"

# 7. An unknown command is a usage error.
"$STACK" start >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] && ok "unknown command: exit 2" || fail "unknown command exited $rc"

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
