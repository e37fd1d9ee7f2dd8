# Sourced by scripts/*.sh: start and stop the servers a run needs, on free
# loopback ports, and stop everything this shell started on exit, Ctrl-C or
# failure.
#
#   source scripts/lib/servers.sh
#   bp_start_valkey            # sets BP_VALKEY_URL, BP_SERVER_DESC and BP_VALKEY_PIDFILE (the
#                              # server writes its pid there; a scenario that
#                              # restarts it, loadgen --valkey-pidfile, too)
#   bp_start_valkey_cluster [N] # N primaries (default 3) in cluster mode,
#                              # created with bp_cli_bin --cluster create;
#                              # sets BP_VALKEY_URL to redis+cluster://...
#   bp_start_mockapi CONFIG    # sets BP_MOCKAPI_URL
#   (trap installed by bp_servers_init stops both)
#   bp_server_bin / bp_cli_bin # the server and cli all of them use
#   bp_server_describe         # "valkey 9.1.2 (/path/valkey-server)"

BP_STARTED_PIDS=()
BP_TMP=""  # made by bp_servers_init: sourcing only for the lookup leaves nothing behind

# The server every script, test and benchmark uses; the C++ mirror is
# FindValkeyBinary in tests/support/valkey_server.cpp. In this order:
#   BP_SERVER=redis     Debian's redis-server (the Redis 7 leg, docs/servers.md)
#   BP_VALKEY_BIN=PATH  that server binary
#   the Valkey 9 scripts/setup.sh builds into $(bp_valkey_cache)/bin
#   valkey-server, then redis-server, on PATH
bp_valkey_cache() { echo "${XDG_CACHE_HOME:-$HOME/.cache}/backpressure/valkey-9"; }

bp_server_bin() {
  local cached
  cached="$(bp_valkey_cache)/bin/valkey-server"
  if [ "${BP_SERVER:-}" = redis ]; then
    command -v redis-server || { echo "BP_SERVER=redis but redis-server is not on PATH" >&2; return 1; }
  elif [ -n "${BP_SERVER:-}" ]; then
    echo "BP_SERVER=$BP_SERVER: only 'redis' (or unset) is known" >&2; return 1
  elif [ -n "${BP_VALKEY_BIN:-}" ]; then
    [ -x "$BP_VALKEY_BIN" ] || { echo "BP_VALKEY_BIN=$BP_VALKEY_BIN is not an executable" >&2; return 1; }
    echo "$BP_VALKEY_BIN"
  elif [ -x "$cached" ]; then
    echo "$cached"
  else
    command -v valkey-server || command -v redis-server ||
      { echo "neither valkey-server nor redis-server found (run scripts/setup.sh)" >&2; return 1; }
  fi
}

# The cli beside the server (valkey-cli or redis-cli), else one on PATH.
bp_cli_bin() {
  local server dir
  server=$(bp_server_bin) || return 1
  dir=$(dirname "$server")
  case "$(basename "$server")" in
    valkey-server*) [ -x "$dir/valkey-cli" ] && { echo "$dir/valkey-cli"; return 0; } ;;
    redis-server*) [ -x "$dir/redis-cli" ] && { echo "$dir/redis-cli"; return 0; } ;;
  esac
  command -v valkey-cli || command -v redis-cli ||
    { echo "neither valkey-cli nor redis-cli found (run scripts/setup.sh)" >&2; return 1; }
}

# "valkey 9.1.2 (/path/to/valkey-server)" or "redis 7.0.15 (/usr/bin/redis-server)".
bp_server_describe() {
  local server version
  server=$(bp_server_bin) || return 1
  version=$("$server" --version | grep -o 'v=[0-9.]*' | cut -c3-)
  case "$("$server" --version)" in
    Valkey*) echo "valkey $version ($server)" ;;
    *) echo "redis $version ($server)" ;;
  esac
}

bp_free_port() {
  python3 - <<'PY' 2>/dev/null && return 0
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
  # Fallback without python: a random high port not listed by ss.
  local p
  for _ in $(seq 1 50); do
    p=$(( 20000 + RANDOM % 40000 ))
    ss -ltn 2>/dev/null | grep -q ":$p " || { echo "$p"; return 0; }
  done
  return 1
}

bp_wait_port() {  # port timeout_s
  local deadline=$(( $(date +%s) + $2 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

bp_stop_all() {
  local pid
  # A Valkey restarted by a scenario (state_outage mode stop) is not our
  # child; its pid is in the pid file it writes.
  if [ -n "$BP_TMP" ] && [ -s "$BP_TMP/valkey.pid" ]; then
    pid=$(cat "$BP_TMP/valkey.pid")
    if [[ "$pid" =~ ^[0-9]+$ ]] && [[ " ${BP_STARTED_PIDS[*]} " != *" $pid "* ]]; then
      BP_STARTED_PIDS+=("$pid")
    fi
  fi
  for pid in "${BP_STARTED_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${BP_STARTED_PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  BP_STARTED_PIDS=()
  [ -z "$BP_TMP" ] || rm -rf "$BP_TMP"
}

bp_servers_init() {
  [ -n "$BP_TMP" ] || BP_TMP="$(mktemp -d -t bp.XXXXXX)"
  trap 'bp_stop_all' EXIT
  trap 'echo "interrupted: stopping servers" >&2; exit 130' INT TERM
}

bp_start_valkey() {
  local bin port
  bin=$(bp_server_bin) || return 1
  port=$(bp_free_port)
  "$bin" --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize no --loglevel warning --logfile "$BP_TMP/valkey.log" \
    --pidfile "$BP_TMP/valkey.pid" &
  BP_STARTED_PIDS+=($!)
  bp_wait_port "$port" 10 || { echo "valkey did not start on $port" >&2; return 1; }
  BP_VALKEY_URL="redis://127.0.0.1:$port"
  BP_VALKEY_PIDFILE="$BP_TMP/valkey.pid"
  BP_SERVER_DESC=$(bp_server_describe)
  export BP_VALKEY_URL BP_VALKEY_PIDFILE BP_SERVER_DESC
  echo "server: $BP_SERVER_DESC on $BP_VALKEY_URL" >&2
}

bp_free_port_block() {  # n: a base p with p..p+n-1 and their bus ports (+10000) all free
  # Below the kernel's ephemeral range (32768-60999 by default), so no
  # outgoing connection holds one of them: p in [20000, 22500), bus < 32768.
  local n=$1 p i busy
  for _ in $(seq 1 50); do
    p=$(( 20000 + RANDOM % 2500 ))
    busy=0
    for i in $(seq 0 $(( n - 1 ))); do
      if ss -tan 2>/dev/null | grep -qE "[:.]($(( p + i ))|$(( p + i + 10000 )))[[:space:]]"; then busy=1; break; fi
    done
    [ "$busy" -eq 1 ] || { echo "$p"; return 0; }
  done
  return 1
}

bp_start_valkey_cluster() {  # [primaries]
  local n=${1:-3} bin cli port i attempt base pid ok
  bin=$(bp_server_bin) || return 1
  cli=$(bp_cli_bin) || return 1
  local ports=() pids=() addrs=() seeds=""
  for attempt in 1 2 3 4 5; do  # a port taken between the check and the bind: try others
    base=$(bp_free_port_block "$n") || { echo "no free ports for the cluster" >&2; return 1; }
    ports=() pids=()
    for i in $(seq 0 $(( n - 1 ))); do
      port=$(( base + i ))
      mkdir -p "$BP_TMP/cluster-$port"
      (cd "$BP_TMP/cluster-$port" && exec "$bin" --port "$port" --bind 127.0.0.1 --save "" \
        --appendonly no --daemonize no --loglevel warning --logfile "$BP_TMP/cluster-$port.log" \
        --cluster-enabled yes --cluster-config-file "$BP_TMP/cluster-$port/nodes.conf" \
        --cluster-node-timeout 2000 --cluster-require-full-coverage no) &
      pids+=($!)
      BP_STARTED_PIDS+=($!)
      ports+=("$port")
    done
    ok=1
    for i in $(seq 0 $(( n - 1 ))); do
      if ! bp_wait_port "${ports[$i]}" 10 || ! kill -0 "${pids[$i]}" 2>/dev/null; then
        echo "cluster node did not start on ${ports[$i]} (attempt $attempt):" >&2
        tail -n 3 "$BP_TMP/cluster-${ports[$i]}.log" >&2 2>/dev/null || true
        ok=0
        break
      fi
    done
    [ "$ok" -eq 1 ] && break
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  done
  [ "$ok" -eq 1 ] || { echo "could not start the cluster nodes" >&2; return 1; }
  for port in "${ports[@]}"; do
    addrs+=("127.0.0.1:$port")
    seeds="$seeds${seeds:+,}127.0.0.1:$port"
  done
  "$cli" --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes \
    >"$BP_TMP/cluster-create.log" 2>&1 ||
    { echo "$cli --cluster create failed:" >&2; cat "$BP_TMP/cluster-create.log" >&2; return 1; }
  local deadline=$(( $(date +%s) + 20 ))
  for port in "${ports[@]}"; do
    until "$cli" -p "$port" cluster info 2>/dev/null | grep -q "cluster_state:ok"; do
      [ "$(date +%s)" -lt "$deadline" ] || { echo "cluster_state:ok not reached on $port" >&2; return 1; }
      sleep 0.2
    done
  done
  BP_VALKEY_URL="redis+cluster://$seeds"
  BP_VALKEY_PIDFILE=""
  BP_SERVER_DESC="$(bp_server_describe), $n-primary cluster"
  export BP_VALKEY_URL BP_VALKEY_PIDFILE BP_SERVER_DESC
  echo "server: $BP_SERVER_DESC on $BP_VALKEY_URL" >&2
}

bp_start_mockapi() {  # config [extra flags...]
  local config=$1; shift
  local port
  port=$(bp_free_port)
  ./build/apps/mockapi --config "$config" --port "$port" "$@" >"$BP_TMP/mockapi.log" 2>&1 &
  BP_STARTED_PIDS+=($!)
  bp_wait_port "$port" 10 || { echo "mockapi did not start on $port:" >&2; cat "$BP_TMP/mockapi.log" >&2; return 1; }
  BP_MOCKAPI_URL="http://127.0.0.1:$port"
  export BP_MOCKAPI_URL
}
