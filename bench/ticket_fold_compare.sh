#!/usr/bin/env bash
# What per-field expiry would save the admission script, measured
# (docs/benchmarks.md, "Tickets in the state hash"):
#
#   bench/ticket_fold_compare.sh [QUEUES] [CALLS]     (default 1000, 20000)
#
# On one server (setup's Valkey 9: HSETEX needs hash-field expiry), side by
# side and alternating, three rounds each, four scripts:
#   key     prelude.lua + admit.lua as shipped: each ticket is its own key
#           written with SET ... PX (release.lua takes it with GETDEL);
#   field   the same text with that SET replaced by one HSETEX of the field
#           tk:<n> of the state hash with the same expiry (the fold the
#           key schema would make on a server with per-field expiry);
#   none    the same text without the ticket write (not a working gate: the
#           floor any ticket layout can reach);
#   trivial bench/noop.lua, one HINCRBY (gate_bench's trivial script: the
#           fixed cost of a script call that writes).
# Each admission round: a fresh target, QUEUES queues registered and
# backlogged under a tiny cap, the cap raised, CONFIG RESETSTAT, then CALLS
# admissions from one valkey-benchmark client over random queues (every call
# admitted); usec_per_call and p99 of INFO commandstats/latencystats.
# Then the ticket's commands alone, in one EVAL looping CALLS times each
# (os.clock: the server's CPU time, so other load on the machine counts
# less): SET PX of a key against HSETEX of a field, and GETDEL against
# HGETDEL (release.lua's read-and-delete of the ticket).
set -euo pipefail
cd "$(dirname "$0")/.."
nq=${1:-1000}
calls=${2:-20000}
# shellcheck source=../scripts/lib/servers.sh
source scripts/lib/servers.sh
bp_servers_init
server=$(bp_server_bin)
cli=$(bp_cli_bin)
bench=$(command -v valkey-benchmark || command -v redis-benchmark || true)
[ -n "$bench" ] || bench="$(dirname "$cli")/valkey-benchmark"
[ -x "$bench" ] || { echo "ticket_fold_compare: no valkey-benchmark or redis-benchmark" >&2; exit 2; }
work="$BP_TMP/ticket-fold"
mkdir -p "$work"
port=$(bp_free_port)
"$server" --port "$port" --bind 127.0.0.1 --appendonly no --save "" --daemonize no \
  --dir "$work" --loglevel warning --logfile "$work/server.log" &
BP_STARTED_PIDS+=($!)
bp_wait_port "$port" 10
R=("$cli" -p "$port")
"${R[@]}" hsetex probe px 1000 fields 1 f v >/dev/null 2>&1 || {
  echo "ticket_fold_compare: $(bp_server_describe) has no HSETEX (hash-field expiry); Valkey 9 does" >&2
  exit 2
}
echo "server: $(bp_server_describe); benchmark client: $bench"

# prelude.lua + the scripts' files (admit.lua's: lib/gate/lua/parts.txt)
python3 bench/gate_lua.py --bare admit >"$work/key.lua"
python3 bench/gate_lua.py --bare configure >"$work/configure.lua"
python3 - "$work" <<'PY'
import re, sys
work = sys.argv[1]
text = open(f"{work}/key.lua").read()
ticket_set = re.compile(r"redis\.call\('SET', P \.\. ':tk:' \.\. ticket, (.*?), 'PX', (string\.format\('%d', ticket_ttl\))\)", re.S)
if len(ticket_set.findall(text)) != 1:
    sys.exit("ticket_fold_compare: admit.lua's ticket SET not found; update the pattern")
open(f"{work}/field.lua", "w").write(ticket_set.sub(
    lambda m: f"redis.call('HSETEX', H, 'PX', {m.group(2)}, 'FIELDS', 1, 'tk:' .. ticket, {m.group(1)})", text))
open(f"{work}/none.lua", "w").write(ticket_set.sub("local _ = 0", text))
PY

key='bp:{fold}:state'
stats() {  # command -> usec_per_call/p99
  printf '%s/%s\n' \
    "$("${R[@]}" info commandstats | sed -n "s/^cmdstat_$1:.*usec_per_call=\([0-9.]*\).*/\1/p")" \
    "$("${R[@]}" info latencystats | sed -n "s/^latency_percentiles_usec_$1:.*p99=\([0-9.]*\).*/\1/p")"
}
admissions() {  # key|field|none -> usec_per_call/p99
  local a c
  "${R[@]}" flushall >/dev/null
  "${R[@]}" script flush >/dev/null
  a=$("${R[@]}" -x script load <"$work/$1.lua")
  c=$("${R[@]}" -x script load <"$work/configure.lua")
  "${R[@]}" evalsha "$c" 1 "$key" set omega:1 0.5 omega:2 0.3 omega:3 0.2 omega_sum 1 \
    classes 3 slack_ms 50 lend_fraction 0.5 grace_ms 600000 ticket_ttl_ms 600000 \
    requests_per_s 1 tokens_per_s 0 burst_s 1 >/dev/null
  for i in $(seq 0 $((nq - 1))); do
    printf 'EVALSHA %s 1 %s tenant%012d 1 1 0 0 reconcile none 3600000 0\n' "$a" "$key" "$i"
  done | "${R[@]}" >/dev/null
  "${R[@]}" evalsha "$c" 1 "$key" set requests_per_s 1e9 tokens_per_s 1e12 >/dev/null
  "${R[@]}" config resetstat >/dev/null
  "$bench" -p "$port" -n "$calls" -r "$nq" -c 1 -q EVALSHA "$a" 1 "$key" tenant__rand_int__ 1 1 \
    100 0 reconcile none 3600000 0 >/dev/null 2>&1
  stats evalsha
}
trivial() {
  local one
  one=$("${R[@]}" -x script load <bench/noop.lua)
  "${R[@]}" config resetstat >/dev/null
  "$bench" -p "$port" -n "$calls" -c 1 -q EVALSHA "$one" 1 "$key" >/dev/null 2>&1
  stats evalsha
}
median() { sort -g | sed -n 2p; }

echo "uptime: $(uptime)"
declare -A got
for _ in 1 2 3; do
  for v in key field none; do got[$v]+="$(admissions "$v") "; done
  got[trivial]+="$(trivial) "
done
echo "uptime: $(uptime)"
t=$(printf '%s\n' ${got[trivial]} | cut -d/ -f1 | median)
echo "| script | usec_per_call/p99 (3 rounds) | median us | median p99 us | / trivial |"
echo "|---|---|---|---|---|"
for v in key field none trivial; do
  m=$(printf '%s\n' ${got[$v]} | cut -d/ -f1 | median)
  p=$(printf '%s\n' ${got[$v]} | cut -d/ -f2 | median)
  echo "| $v | ${got[$v]}| $m | $p | $(python3 -c "print(f'{$m / $t:.2f}')") |"
done

echo
echo "the ticket's commands alone, us of server CPU per command (3 rounds):"
ops='local n, H = tonumber(ARGV[1]), KEYS[1]
local v, t = "1 1 100 0 q 100", {os.clock()}
for i = 1, n do redis.call("SET", "bp:{fold}:tk:" .. i, v, "PX", "600000") end
t[2] = os.clock()
for i = 1, n do redis.call("HSETEX", H, "PX", "600000", "FIELDS", "1", "tk:" .. i, v) end
t[3] = os.clock()
for i = 1, n do redis.call("GETDEL", "bp:{fold}:tk:" .. i) end
t[4] = os.clock()
for i = 1, n do redis.call("HGETDEL", H, "FIELDS", "1", "tk:" .. i) end
t[5] = os.clock()
local r = {}
for i = 1, 4 do r[i] = string.format("%.2f", (t[i + 1] - t[i]) * 1e6 / n) end
return r'
echo "| round | SET PX | HSETEX | GETDEL | HGETDEL |"
echo "|---|---|---|---|---|"
for round in 1 2 3; do
  "${R[@]}" flushall >/dev/null
  echo "| $round | $("${R[@]}" eval "$ops" 1 "$key" "$calls" | paste -sd'|' | sed 's/|/ | /g') |"
done
