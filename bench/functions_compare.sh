#!/usr/bin/env bash
# Valkey Functions against today's scripts, measured (docs/functions-decision.md):
#
#   bench/functions_compare.sh [QUEUES] [CALLS]     (default 1000, 20000)
#
# On one server (the one scripts/lib/servers.sh finds: setup's Valkey 9),
# side by side and alternating, three rounds each:
#   - admissions: EVALSHA of prelude.lua + admit.lua, as the gate sends it,
#     against FCALL of the same code registered as function bp_admit of a
#     library loaded with FUNCTION LOAD (the body wrapped in
#     function(KEYS, ARGV) ... end, nothing else changed). As
#     bench/admit_script_compare.sh: a fresh target, QUEUES queues registered
#     and backlogged under a tiny cap, the cap raised, CONFIG RESETSTAT, then
#     CALLS admissions from one redis-benchmark client over random queues;
#     usec_per_call of INFO commandstats (server time per call);
#   - a trivial call: EVALSHA of "return 1" against FCALL of a function
#     returning 1 (the fixed cost of each mechanism).
# Then what a restart does to each (without and with an RDB file), and what
# a 3-primary cluster does with a library loaded on one primary.
set -euo pipefail
cd "$(dirname "$0")/.."
nq=${1:-1000}
calls=${2:-20000}
# shellcheck source=../scripts/lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
server=$(bp_server_bin)
cli=$(bp_cli_bin)
bench=$(command -v valkey-benchmark || command -v redis-benchmark)
echo "server: $(bp_server_describe); benchmark client: $bench"
work="$BP_TMP/functions"
mkdir -p "$work"
port=$(bp_free_port)
start_server() {  # extra args...
  "$server" --port "$port" --bind 127.0.0.1 --appendonly no --daemonize no --dir "$work" \
    --loglevel warning --logfile "$work/server.log" "$@" &
  BP_STARTED_PIDS+=($!)
  bp_wait_port "$port" 10
}
start_server --save ""
R=("$cli" -p "$port")

# the texts as the gate sends them (admit.lua's files: lib/gate/lua/parts.txt)
python3 bench/gate_lua.py admit >"$work/admit.lua"
python3 bench/gate_lua.py --bare configure >"$work/configure.lua"
{
  printf '#!lua name=bp_bench\n'
  printf 'server.register_function("bp_one", function(KEYS, ARGV) return 1 end)\n'
  printf 'server.register_function("bp_admit", function(KEYS, ARGV)\n'
  python3 bench/gate_lua.py --bare admit
  printf '\nend)\n'
} >"$work/library.lua"

key='bp:{cmp}:state'
# run evalsha|fcall -> usec_per_call/p50/p99 of that command
run() {
  local how=$1 a c call=()
  "${R[@]}" flushall >/dev/null
  "${R[@]}" function flush >/dev/null
  "${R[@]}" script flush >/dev/null
  a=$("${R[@]}" -x script load <"$work/admit.lua")
  "${R[@]}" -x function load replace <"$work/library.lua" >/dev/null
  c=$("${R[@]}" -x script load <"$work/configure.lua")
  if [ "$how" = evalsha ]; then call=(EVALSHA "$a"); else call=(FCALL bp_admit); fi
  "${R[@]}" evalsha "$c" 1 "$key" set omega:1 0.5 omega:2 0.3 omega:3 0.2 omega_sum 1 \
    classes 3 slack_ms 50 lend_fraction 0.5 grace_ms 600000 ticket_ttl_ms 600000 \
    requests_per_s 1 tokens_per_s 0 burst_s 1 >/dev/null
  for i in $(seq 0 $((nq - 1))); do
    printf '%s %s 1 %s tenant%012d 1 1 0 0 reconcile none 3600000 0\n' "${call[@]}" "$key" "$i"
  done | "${R[@]}" >/dev/null
  "${R[@]}" evalsha "$c" 1 "$key" set requests_per_s 1e9 tokens_per_s 1e12 >/dev/null
  "${R[@]}" config resetstat >/dev/null
  "$bench" -p "$port" -n "$calls" -r "$nq" -c 1 -q "${call[@]}" 1 "$key" tenant__rand_int__ 1 1 \
    100 0 reconcile none 3600000 0 >/dev/null 2>&1
  stats "$how"
}
stats() {  # command -> usec_per_call/p50/p99
  printf '%s/%s/%s\n' \
    "$("${R[@]}" info commandstats | sed -n "s/^cmdstat_$1:.*usec_per_call=\([0-9.]*\).*/\1/p")" \
    "$("${R[@]}" info latencystats | sed -n "s/^latency_percentiles_usec_$1:p50=\([0-9.]*\).*/\1/p")" \
    "$("${R[@]}" info latencystats | sed -n "s/^latency_percentiles_usec_$1:.*p99=\([0-9.]*\).*/\1/p")"
}
trivial() {  # evalsha|fcall -> usec_per_call/p50/p99
  local one
  one=$("${R[@]}" script load "return 1")
  "${R[@]}" config resetstat >/dev/null
  if [ "$1" = evalsha ]; then
    "$bench" -p "$port" -n "$calls" -c 1 -q EVALSHA "$one" 0 >/dev/null 2>&1
  else
    "$bench" -p "$port" -n "$calls" -c 1 -q FCALL bp_one 0 >/dev/null 2>&1
  fi
  stats "$1"
}
median() { sort -g | sed -n 2p; }
field() { cut -d/ -f"$1" | median; }
row() {  # label evalsha-results fcall-results
  local me mf
  me=$(printf '%s\n' $2 | field 1)
  mf=$(printf '%s\n' $3 | field 1)
  echo "| $1 | $2 | $3 | $me | $mf | $(python3 -c "print(f'{$mf / $me:.2f}')") |" \
    "$(printf '%s\n' $2 | field 3) / $(printf '%s\n' $3 | field 3) |"
}

echo "uptime: $(uptime)"
echo "| call | EVALSHA mean/p50/p99 us (3 rounds) | FCALL (3 rounds) | median EVALSHA | median FCALL | FCALL / EVALSHA | p99 EVALSHA / FCALL |"
echo "|---|---|---|---|---|---|---|"
e=() f=()
for _ in 1 2 3; do e+=("$(run evalsha)"); f+=("$(run fcall)"); done
row "admission, $nq queues" "${e[*]}" "${f[*]}"
e=() f=()
for _ in 1 2 3; do e+=("$(trivial evalsha)"); f+=("$(trivial fcall)"); done
row "trivial (return 1)" "${e[*]}" "${f[*]}"
echo "uptime: $(uptime)"

restart() {  # extra server args...
  "${R[@]}" shutdown nosave >/dev/null 2>&1 || true
  sleep 0.3
  start_server "$@"
}
echo
echo "restart without persistence (--save \"\"):"
one=$("${R[@]}" script load "return 1")
"${R[@]}" -x function load replace <"$work/library.lua" >/dev/null
restart --save ""
echo "  EVALSHA after restart: $("${R[@]}" evalsha "$one" 0 2>&1)"
echo "  FCALL after restart:   $("${R[@]}" fcall bp_one 0 2>&1)"
echo "restart from an RDB file (SAVE, then the server restarted on it):"
"${R[@]}" script load "return 1" >/dev/null
"${R[@]}" -x function load replace <"$work/library.lua" >/dev/null
"${R[@]}" save >/dev/null
restart --save "" --dbfilename dump.rdb
echo "  EVALSHA after restart: $("${R[@]}" evalsha "$one" 0 2>&1)"
echo "  FCALL after restart:   $("${R[@]}" fcall bp_one 0 2>&1)"
"${R[@]}" shutdown nosave >/dev/null 2>&1 || true

echo
echo "3-primary cluster, the library loaded on the first primary only:"
bp_start_valkey_cluster 3 2>/dev/null
seeds=${BP_VALKEY_URL#redis+cluster://}
IFS=, read -r -a nodes <<<"$seeds"
"$cli" -p "${nodes[0]##*:}" -x function load replace <"$work/library.lua" >/dev/null
for node in "${nodes[@]}"; do
  p=${node##*:}
  echo "  node $p: FUNCTION LIST libraries: $("$cli" -p "$p" function list | grep -c '^bp_bench$' || true);" \
    "FCALL bp_one: $("$cli" -p "$p" fcall bp_one 0 2>&1)"
done
