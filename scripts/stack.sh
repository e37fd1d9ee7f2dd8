#!/usr/bin/env bash
# A local stack to try the toolkit by hand: one Valkey/Redis and one mockapi
# on free loopback ports, left running until `down`.
#
#   eval "$(scripts/stack.sh up)"   # start (or find running) and export
#   scripts/stack.sh status         # what runs; exit 0 all, 3 not (all) running
#   scripts/stack.sh down           # stop exactly what `up` started
#
# `up` prints on stdout only the export line (BP_VALKEY_URL, which bpctl
# reads, BP_MOCKAPI_URL, and PATH with the built binaries), so `eval` takes
# it; the URLs, pids and log paths go to stderr. A second `up` starts nothing
# and prints the same line. State lives in $BP_STACK_DIR (default .stack/ in
# the repository): each server's pidfile, its log, and the process's start
# time, so `down` never signals a process that merely reuses a recorded pid.
# The binaries come from $BP_BUILD_DIR (default build/, as scripts/setup.sh
# builds them); the server is the one scripts/lib/servers.sh finds.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BP_BUILD_DIR:-$REPO/build}"
STATE="${BP_STACK_DIR:-$REPO/.stack}"
source "$REPO/scripts/lib/servers.sh"  # bp_server_bin, bp_cli_bin, bp_free_port, bp_wait_port
# Sourcing may make a temporary folder for the experiment scripts' servers;
# the stack keeps its own state, so drop it while it is empty.
[ -z "${BP_TMP:-}" ] || rmdir "$BP_TMP" 2>/dev/null || true

die() { echo "stack: $*" >&2; exit 1; }

usage() {
  cat <<'EOF'
usage: scripts/stack.sh up|down|status

  up      start a Valkey/Redis and a mockapi on free loopback ports (or find the
          ones already running) and print the export line to eval:
            eval "$(scripts/stack.sh up)"
  status  say what runs (exit 0 when both run, 3 otherwise)
  down    stop what `up` started (by pidfile, only if the pid is still that
          process); safe to repeat

environment: BP_STACK_DIR (state, default <repo>/.stack),
             BP_BUILD_DIR (binaries, default <repo>/build)
EOF
}

# The start time of PID in clock ticks since boot (/proc/PID/stat field 22):
# with the pid it names one process for the machine's uptime.
start_time() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  # Field 2 (the command) may hold spaces; the fields after its ')' are fixed.
  echo "${stat##*) }" | awk '{print $20}'
}

# The pid of component NAME if it still runs as the process `up` started,
# else nothing (exit 1).
live_pid() {
  local name=$1 pid started
  [ -s "$STATE/$name.pid" ] && [ -s "$STATE/$name.started" ] || return 1
  pid=$(tr -d '[:space:]' < "$STATE/$name.pid")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  started=$(start_time "$pid") || return 1
  [ "$started" = "$(cat "$STATE/$name.started")" ] || return 1
  echo "$pid"
}

record_start() {  # name pid
  local started
  started=$(start_time "$2") || die "$1 (pid $2) exited at once; see $STATE/$1.log"
  echo "$started" > "$STATE/$1.started"
}

export_line() {
  local path_part=""
  case ":$PATH:" in
    *":$BUILD/apps:"*) ;;
    *) path_part=" PATH=\"$BUILD/apps:\$PATH\"" ;;
  esac
  echo "export BP_VALKEY_URL=$(cat "$STATE/valkey.url") BP_MOCKAPI_URL=$(cat "$STATE/mockapi.url")$path_part"
}

describe() {
  echo "valkey:  $(cat "$STATE/valkey.url")  (pid $(live_pid valkey), $(cat "$STATE/valkey.bin"), log $STATE/valkey.log)" >&2
  echo "mockapi: $(cat "$STATE/mockapi.url")  (pid $(live_pid mockapi), log $STATE/mockapi.log)" >&2
}

start_valkey() {
  local bin cli port pid
  bin=$(bp_server_bin) || exit 1
  cli=$(bp_cli_bin) || exit 1
  port=$(bp_free_port) || die "no free loopback port"
  rm -f "$STATE/valkey.pid"
  # --daemonize: the server detaches and writes its own pidfile; --dir keeps
  # anything it writes inside the state folder.
  "$bin" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
    --dir "$STATE" --pidfile "$STATE/valkey.pid" --logfile "$STATE/valkey.log" \
    --loglevel notice </dev/null >/dev/null 2>&1 || die "$bin did not start; see $STATE/valkey.log"
  for _ in $(seq 1 100); do
    [ "$("$cli" -h 127.0.0.1 -p "$port" PING 2>/dev/null)" = PONG ] && [ -s "$STATE/valkey.pid" ] && break
    sleep 0.1
  done
  [ "$("$cli" -h 127.0.0.1 -p "$port" PING 2>/dev/null)" = PONG ] ||
    die "$bin did not answer PING on port $port within 10 s; see $STATE/valkey.log"
  pid=$(tr -d '[:space:]' < "$STATE/valkey.pid")
  record_start valkey "$pid"
  echo "redis://127.0.0.1:$port" > "$STATE/valkey.url"
  echo "$bin" > "$STATE/valkey.bin"
}

start_mockapi() {
  local port pid
  port=$(bp_free_port) || die "no free loopback port"
  # setsid: its own session, so a Ctrl-C in the shell that ran `up` does not
  # reach it; every stream away from the caller's pipe, so `$(...)` returns.
  setsid "$BUILD/apps/mockapi" --host 127.0.0.1 --port "$port" \
    </dev/null >"$STATE/mockapi.log" 2>&1 &
  pid=$!
  echo "$pid" > "$STATE/mockapi.pid"
  record_start mockapi "$pid"
  echo "http://127.0.0.1:$port" > "$STATE/mockapi.url"
  for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || die "mockapi exited; see $STATE/mockapi.log"
    sleep 0.1
  done
  die "mockapi did not answer /healthz on port $port within 10 s; see $STATE/mockapi.log"
}

stop_one() {  # name
  local name=$1 pid
  if pid=$(live_pid "$name"); then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    echo "stopped $name (pid $pid)" >&2
  elif [ -e "$STATE/$name.pid" ]; then
    echo "$name: not running (stale pidfile removed)" >&2
  fi
  rm -f "$STATE/$name.pid" "$STATE/$name.started" "$STATE/$name.url" "$STATE/$name.bin"
}

cmd_up() {
  local valkey_up=0 mockapi_up=0
  live_pid valkey >/dev/null && valkey_up=1
  live_pid mockapi >/dev/null && mockapi_up=1
  if [ "$valkey_up$mockapi_up" = 11 ]; then
    echo "stack: already running" >&2
    describe
    export_line
    return 0
  fi
  [ -x "$BUILD/apps/mockapi" ] ||
    die "$BUILD/apps/mockapi not found: run scripts/setup.sh first (it builds into build/)"
  [ -x "$BUILD/apps/loadgen" ] && [ -x "$BUILD/apps/bpctl" ] ||
    die "loadgen or bpctl missing in $BUILD/apps: run scripts/setup.sh first"
  command -v curl >/dev/null || die "curl not found: run scripts/setup.sh first"
  mkdir -p "$STATE"
  # Half a stack (one server died): start the missing part, keep the other.
  [ "$valkey_up" = 1 ] || { stop_one valkey 2>/dev/null; start_valkey; }
  [ "$mockapi_up" = 1 ] || { stop_one mockapi 2>/dev/null; start_mockapi; }
  describe
  export_line
}

cmd_status() {
  local name pid running=0
  for name in valkey mockapi; do
    if pid=$(live_pid "$name"); then
      echo "$name: running, pid $pid, $(cat "$STATE/$name.url")"
      running=$((running + 1))
    else
      echo "$name: not running"
    fi
  done
  if [ "$running" = 2 ]; then
    export_line
    return 0
  fi
  return 3
}

cmd_down() {
  if [ ! -d "$STATE" ]; then
    echo "stack: nothing to stop ($STATE does not exist)" >&2
    return 0
  fi
  stop_one mockapi
  stop_one valkey
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
