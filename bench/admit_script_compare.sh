#!/usr/bin/env bash
# Server time per admission of admit.lua at a git revision against the
# working tree's, side by side on one redis-server, so a script change is
# judged by its ratio measured in one run (docs/benchmarks.md):
#
#   bench/admit_script_compare.sh [REV] [CALLS]     (default f7dc3b1, 20000)
#
# REV's scripts are taken with `git show` from lib/lua/ or lib/gate/lua/
# (with prelude.lua and the parts of lib/gate/lua/parts.txt when REV has
# them, sent as the build embeds it: bench/gate_lua.py). For each
# of 10, 1 000 and 10 000 queues and each script in turn (three rounds,
# alternating): a fresh target, the queues registered and backlogged under a
# tiny cap (as bench/gate_bench.cpp does), the cap raised, CONFIG RESETSTAT,
# then CALLS admissions of class 1 from one redis-benchmark client over random
# queues among the registered ones (redis-benchmark writes __rand_int__ as 12
# digits, so the queues are registered as tenant%012d). Prints EVALSHA
# usec_per_call (INFO commandstats) per round, the median of each and the
# medians of the p50/p99 of INFO latencystats; a ratio below 1 means the
# working tree's script is cheaper.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-f7dc3b1}
calls=${2:-20000}
# shellcheck source=../scripts/lib/servers.sh
source scripts/lib/servers.sh
server=$(bp_server_bin)
cli=$(bp_cli_bin)
echo "server: $(bp_server_describe)"
bench=$(command -v valkey-benchmark || command -v redis-benchmark)
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
  --pidfile "$work/pid" --logfile "$work/log" --dir "$work"
stop() {
  local pid
  pid=$(cat "$work/pid" 2>/dev/null) || true
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$work"
}
trap stop EXIT
R=("$cli" -p "$port")
for _ in $(seq 50); do "${R[@]}" ping >/dev/null 2>&1 && break; sleep 0.1; done

# script text of $1 (admit|configure) at revision $2 ("" = working tree)
text() {
  python3 bench/gate_lua.py --rev "$2" "$1"
}
text admit "$rev" >"$work/old_admit.lua"
text configure "$rev" >"$work/old_configure.lua"
text admit "" >"$work/new_admit.lua"
text configure "" >"$work/new_configure.lua"

# run OLD|NEW QUEUES -> usec_per_call
run() {
  local which=$1 nq=$2 key mode=() a c
  if grep -q "prelude.lua" "$work/${which}_admit.lua"; then
    key='bp:{cmp}:state'
    mode=(set)
  else
    key='bp:{cmp}'
  fi
  "${R[@]}" flushall >/dev/null
  a=$("${R[@]}" script load "$(cat "$work/${which}_admit.lua")")
  c=$("${R[@]}" script load "$(cat "$work/${which}_configure.lua")")
  "${R[@]}" evalsha "$c" 1 "$key" "${mode[@]}" omega:1 0.5 omega:2 0.3 omega:3 0.2 omega_sum 1 \
    classes 3 slack_ms 50 lend_fraction 0.5 grace_ms 600000 ticket_ttl_ms 600000 \
    requests_per_s 1 tokens_per_s 0 burst_s 1 >/dev/null
  for i in $(seq 0 $((nq - 1))); do
    printf 'EVALSHA %s 1 %s tenant%012d 1 1 0 0 reconcile none 3600000 0\n' "$a" "$key" "$i"
  done | "${R[@]}" >/dev/null
  "${R[@]}" evalsha "$c" 1 "$key" "${mode[@]}" requests_per_s 1e9 tokens_per_s 1e12 >/dev/null
  "${R[@]}" config resetstat >/dev/null
  "$bench" -p "$port" -n "$calls" -r "$nq" -c 1 -q EVALSHA "$a" 1 "$key" tenant__rand_int__ 1 1 \
    100 0 reconcile none 3600000 0 >/dev/null 2>&1
  printf '%s/%s/%s\n' \
    "$("${R[@]}" info commandstats | sed -n 's/^cmdstat_evalsha:.*usec_per_call=\([0-9.]*\).*/\1/p')" \
    "$("${R[@]}" info latencystats | sed -n 's/^latency_percentiles_usec_evalsha:p50=\([0-9.]*\).*/\1/p')" \
    "$("${R[@]}" info latencystats | sed -n 's/^latency_percentiles_usec_evalsha:.*p99=\([0-9.]*\).*/\1/p')"
}
median() { sort -g | sed -n 2p; }
# field F (1 mean, 2 p50, 3 p99) of "mean/p50/p99" lines on stdin, median
field() { cut -d/ -f"$1" | median; }

echo "uptime: $(uptime)"
echo "| queues | $rev mean/p50/p99 us (3 rounds) | working tree (3 rounds) | median mean $rev | median mean tree | ratio | p50 $rev / tree | p99 $rev / tree |"
echo "|---|---|---|---|---|---|---|---|"
for nq in 10 1000 10000; do
  olds=() news=()
  for _ in 1 2 3; do
    olds+=("$(run old "$nq")")
    news+=("$(run new "$nq")")
  done
  mo=$(printf '%s\n' "${olds[@]}" | field 1)
  mn=$(printf '%s\n' "${news[@]}" | field 1)
  po=$(printf '%s\n' "${olds[@]}" | field 2) pn=$(printf '%s\n' "${news[@]}" | field 2)
  qo=$(printf '%s\n' "${olds[@]}" | field 3) qn=$(printf '%s\n' "${news[@]}" | field 3)
  echo "| $nq | ${olds[*]} | ${news[*]} | $mo | $mn | $(python3 -c "print(f'{$mn / $mo:.2f}')") | $po / $pn | $qo / $qn |"
done
echo "uptime: $(uptime)"
