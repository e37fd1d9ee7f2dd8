#!/usr/bin/env bash
# Bad command lines of the binaries and scripts exit 2 with a message, before
# any server is started or any run begins, so a typo costs no run. Usage:
#   tests/cli/exit_codes.sh BUILD_DIR
# Each case must finish within 10 s (nothing here connects anywhere).
set -uo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$1"
W="$SRC/configs/workloads/overload.json"
fails=0

# expect CODE MESSAGE_SUBSTRING COMMAND...
expect() {
  local code="$1" text="$2"
  shift 2
  local err rc
  err="$(timeout 10 "$@" 2>&1 >/dev/null)"
  rc=$?
  if [ "$rc" -ne "$code" ] || [[ "$err" != *"$text"* ]]; then
    echo "FAIL: $* -> exit $rc (want $code), stderr:"
    echo "$err" | head -5
    fails=$((fails + 1))
  else
    echo "ok: $* -> $rc"
  fi
}

M="$BUILD/apps/mockapi"
expect 2 "--host must be an IPv4 or IPv6 address" "$M" --host 999.1.1.1
expect 2 "listen.port: must be an integer in [0, 65535]" "$M" --port 70000
expect 2 "unrecognised option '--colour'" "$M" --colour
expect 2 "too many positional options" "$M" stray
expect 2 "--limit has a non-numeric value: requests:fixed_window:60abc:1: LIMIT must be decimal digits, got '60abc'" \
  "$M" --limit requests:fixed_window:60abc:1
expect 2 "--limit has an out-of-range value: requests:fixed_window:99999999999999999999:60: LIMIT must be an integer in [1, 1125899906842624], got '99999999999999999999'" \
  "$M" --limit requests:fixed_window:99999999999999999999:60

L="$BUILD/apps/loadgen"
expect 2 "--upstream: http://999.1.1.1:8080: host must be an IP literal" \
  "$L" --workload "$W" --upstream http://999.1.1.1:8080
expect 2 "--upstream: http://127.0.0.1:0x1F90: bad port '0x1F90'" \
  "$L" --workload "$W" --upstream http://127.0.0.1:0x1F90
expect 2 "--valkey: " "$L" --workload "$W" --valkey http://127.0.0.1:6379
expect 2 "--config has an empty item in \"naive,,bp\"" "$L" --workload "$W" --config naive,,bp
expect 2 "--gate-threads must be in [1, 256], got 0" "$L" --workload "$W" --gate-threads 0
# The declared gate configuration is read, and refused with its path and
# field, before anything runs.
expect 2 "--gate-config /nonexistent/declared.json: cannot read the gate configuration file" \
  "$L" --workload "$W" --gate-config /nonexistent/declared.json
expect 2 "--gate-config $W: name: unknown field" "$L" --workload "$W" --gate-config "$W"
# Integer flags: a range in the message, for integers out of it and for
# anything else (Boost's bare "the argument ('0.5') ... is invalid" named none).
BR="must be in [0, 60000] ms (0 = no circuit breaker), got"
expect 2 "--gate-breaker-ms $BR -5" "$L" --workload "$W" --gate-breaker-ms=-5
expect 2 "--gate-breaker-ms $BR 60001" "$L" --workload "$W" --gate-breaker-ms 60001
expect 2 "--gate-breaker-ms $BR 2147483647" "$L" --workload "$W" --gate-breaker-ms 2147483647
BI="--gate-breaker-ms must be an integer in [0, 60000] ms (0 = no circuit breaker), got"
expect 2 "$BI '2147483648'" "$L" --workload "$W" --gate-breaker-ms 2147483648
expect 2 "$BI '1e9'" "$L" --workload "$W" --gate-breaker-ms 1e9
expect 2 "$BI '0.5'" "$L" --workload "$W" --gate-breaker-ms 0.5
expect 2 "--gate-timeout-ms must be in [1, 60000] ms, got 0" "$L" --workload "$W" --gate-timeout-ms 0
expect 2 "--gate-timeout-ms must be an integer in [1, 60000] ms, got 'x'" \
  "$L" --workload "$W" --gate-timeout-ms x
expect 2 "--repeats must be an integer in [1, 1000], got '1.5'" "$L" --workload "$W" --repeats 1.5
expect 2 "--repeats must be in [1, 1000], got 0" "$L" --workload "$W" --repeats 0
expect 2 "--gate-threads must be an integer in [1, 256], got '99999999999'" \
  "$L" --workload "$W" --gate-threads 99999999999
expect 2 "--processes must be an integer in [1, 256], got '2.5'" "$L" --workload "$W" --processes 2.5
expect 2 "--valkey-pid must be in [0, 4194304] (0 = none), got -1" "$L" --workload "$W" --valkey-pid=-1
expect 2 "--seed must be an integer in [0, 18446744073709551615], got '-1'" \
  "$L" --workload "$W" --seed=-1
expect 2 "configuration \"bp\" twice" "$L" --workload "$W" --config bp,bp
expect 2 "--speedup must be in (0, 1000]" "$L" --workload "$W" --speedup 0
expect 2 "too many positional options" "$L" --workload "$W" stray
expect 2 "--out must name a directory" "$L" --workload "$W" --out ""
expect 2 "workload name \"overload\" twice" "$L" --workload "$W" --workload "$W"
expect 2 "cannot create or write the results directory" "$L" --workload "$W" --out "$W"
# Cooperating processes: flag checks before any run.
expect 2 "--shard must be I/N with 0 <= I < N <= 256" "$L" --workload "$W" --shard 2/2 --start-at 1
expect 2 "--shard needs --start-at UNIX_MS" "$L" --workload "$W" --config naive --shard 0/2
# A --start-at that is given but not a positive unix ms says so (it said
# "--shard needs --start-at UNIX_MS", as if the flag were missing).
SA="--start-at must be a positive unix ms (an integer, e.g. \$(( \$(date +%s%3N) + 5000 ))), got"
expect 2 "$SA '-5'" "$L" --workload "$W" --config naive --shard 0/2 --start-at=-5
expect 2 "$SA '0'" "$L" --workload "$W" --config naive --shard 0/2 --start-at 0
expect 2 "$SA '1.5e12'" "$L" --workload "$W" --config naive --shard 0/2 --start-at 1.5e12
expect 2 "--shard with bp needs --gate-target NAME" "$L" --workload "$W" --config bp --shard 0/2 --start-at 1
expect 2 "--shard runs one run" "$L" --workload "$W" --config naive,bp --shard 0/2 --start-at 1
expect 2 "--start-at and --gate-target go with --shard" "$L" --workload "$W" --gate-target g
expect 2 "--processes must be in [1, 256]" "$L" --workload "$W" --processes 0
expect 2 "cannot run over processes" "$L" --workload "$SRC/configs/scenarios/join-leave.json" --processes 2
expect 2 "1 tenants cannot be split over 2 processes" "$L" --workload "$W" --workload "$SRC/configs/workloads/uncongested.json" --processes 2
expect 2 "--out DIR is required" "$L" merge somewhere
expect 2 "no such file or directory" "$L" merge --out /tmp /nonexistent/bp-shards
# A workload whose gate caps fall outside bpctl's ranges (bp/gate_ranges.h): was run,
# configuring a burst of 1e299 s that `bpctl import` refuses.
TMPW="$(mktemp -d)"
trap 'rm -rf "$TMPW"' EXIT
python3 - "$W" "$TMPW/burst.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w.setdefault("gate", {})["burst_s"] = 1e300
json.dump(w, open(sys.argv[2], "w"))
PY
expect 2 "$TMPW/burst.json: gate.burst_s: 1e+300 gives the gate a burst_s (paper seconds) of 1e+300, must be in [0.001, 3600]" \
  "$L" --workload "$TMPW/burst.json" --out ""
# 0.1 paper s at speedup 1000 (1e-4 real s of 1000x the cap) is in range: a
# bp run at 1000 gets as far as the --out check.
expect 2 "--out must name a directory" "$L" --workload "$W" --config naive,bp --speedup 1000 --out ""
expect 2 "--out must name a directory" "$L" --workload "$W" --config naive --speedup 1000 --out ""

# bpctl: bad values are exit 3 before connecting (port 1: nothing listens).
B="$BUILD/apps/bpctl"
for i in 1e10 9.3e9 1e13 1e300 0.01; do
  expect 3 "--interval: must be a number in [0.05, 86400], got '$i'" \
    "$B" --valkey redis://127.0.0.1:1 watch --interval "$i"
done
expect 3 "--max-cost-tokens: must be 0 (the default) or a number in [1, 1000000000000], got '0.5'" \
  "$B" --valkey redis://127.0.0.1:1 set cap --rpm 60 --max-cost-tokens 0.5

# A usage error is its line and where the help is, not the
# whole help (two lines exactly); --help still prints it all.
expect_lines() {
  local want="$1" second="$2"
  shift 2
  local err n
  err="$(timeout 10 "$@" 2>&1 >/dev/null)"
  n="$(printf '%s\n' "$err" | wc -l)"
  if [ "$n" -ne "$want" ] || [ "$(printf '%s\n' "$err" | tail -1)" != "$second" ]; then
    echo "FAIL: $* -> $n stderr line(s) (want $want, the last \"$second\"):"
    echo "$err" | head -5
    fails=$((fails + 1))
  else
    echo "ok: $* -> $n line(s)"
  fi
}
expect_lines 2 "see loadgen --help" "$L" --workload "$W" --speedup 0
expect_lines 2 "see loadgen --help" "$L" --workload "$W" --colour
expect_lines 2 "see loadgen merge --help" "$L" merge --out /tmp /nonexistent/bp-shards
if [ "$(timeout 10 "$L" --help | grep -c -e '--start-at' -e 'Examples:')" -lt 2 ]; then
  echo "FAIL: loadgen --help lacks --start-at or the examples"
  fails=$((fails + 1))
fi
# --speedup is checked against what mockapi takes after scaling (overload.json's
# latency.min_ms 50 paper ms is 5e8 real ms at 1e-7), naming the flag and the
# range as sent.
expect 2 "--speedup 1e-07: $W: upstream.latency.min_ms: must be a number in [0, 3.6e+06] once divided by the speedup 1e-07, i.e. in [0, 0.36] as sent, got 50" \
  "$L" --workload "$W" --speedup 1e-7
# --start-at within 1 h of now: seconds, or an extra digit, are refused.
NOW_S="$(date +%s)"
expect 2 "years in the past (seconds? --start-at takes unix ms" \
  "$L" --workload "$W" --config naive --shard 0/2 --start-at "$NOW_S"
expect 2 "years in the future (an extra digit?" \
  "$L" --workload "$W" --config naive --shard 0/2 --start-at "${NOW_S}0000"
expect 2 "--start-at $((NOW_S * 1000 - 7200000)): 2.0 h in the past; it must be unix ms within 1 h of now" \
  "$L" --workload "$W" --config naive --shard 0/2 --start-at "$((NOW_S * 1000 - 7200000))"
# scale.sh checks its flags before setup.sh and servers.
X="$SRC/scripts/scale.sh"
expect 2 "--lights: each L an integer" "$X" --lights "10 x"
expect 2 "--processes must be in [1, 256]" "$X" --processes 0

# experiment.sh checks its flags before setup (--no-setup not given: a setup
# run would take minutes and exceed the timeout) and before starting servers.
E="$SRC/scripts/experiment.sh"
expect 2 "--config has an empty item" "$E" --config naive,,bp
expect 2 "unknown configuration 'fast'" "$E" --config naive,fast
expect 2 "--speedup must be a number in (0, 1000]" "$E" --speedup 0
expect 2 "--repeats must be a positive integer" "$E" --repeats 0
expect 2 "--valkey must be redis://" "$E" --valkey http://127.0.0.1:6379
expect 2 "--upstream must be http://HOST:PORT" "$E" --upstream 127.0.0.1
expect 2 "no workload 'nothing'" "$E" --workload nothing
expect 2 "unknown option '--fast'" "$E" --fast
expect 2 "--processes must be an integer in [1, 256]" "$E" --processes 0

# scenarios.sh and adaptive-caps.sh likewise (before setup.sh and servers).
S="$SRC/scripts/scenarios.sh"
expect 2 "--speedup must be a number in (0, 1000]" "$S" --speedup 0
expect 2 "unknown configuration 'fast'" "$S" --config naive,fast
expect 2 "--config has an empty item" "$S" --config naive,
expect 2 "no scenario 'nothing'" "$S" --scenario nothing
expect 2 "--gate-breaker-ms needs a whole number of ms in [0, 60000] (loadgen's range), got '-1'" \
  "$S" --gate-breaker-ms -1
expect 2 "--gate-breaker-ms needs a whole number of ms in [0, 60000] (loadgen's range), got '60001'" \
  "$S" --gate-breaker-ms 60001
A="$SRC/scripts/adaptive-caps.sh"
expect 2 "unknown case 'nope'" "$A" --case nope
expect 2 "--speedup must be a number in (0, 1000]" "$A" --speedup 0
expect 2 "--settle-s must be a number >= 0" "$A" --settle-s -3
expect 2 "--case needs a value" "$A" --case
expect 2 "--analyze-only: no results folder" "$A" --analyze-only /nonexistent/bp-results

# --speedup: every script takes exactly the forms loadgen takes
# (scripts/lib/flags.sh bp_check_speedup). They disagreed: adaptive-caps.sh
# had a pattern of its own, and all four refused "1e1" and "+5", the other
# three ".5" and "5.", all of which loadgen runs. Each command fails on a
# later flag when the speedup passes, so nothing starts.
accepts() {  # accepts REFUSAL_TEXT COMMAND...: 0 if stderr lacks REFUSAL_TEXT
  local text="$1" err
  shift
  err="$(timeout 10 "$@" 2>&1 >/dev/null)"
  [[ "$err" != *"$text"* ]]
}
for s in 5 0.5 .5 5. 00.5 +5 1e1 1E1 5e-1 1e+1 1e3 1000 1000.0 0.0001 \
  0 -5 1001 1e4 inf nan INF 0x10 " 5" "5 " 5abc . 1e ++5 5.5.5 -0.5; do
  # loadgen: a workload twice is refused right after the speedup is taken.
  if accepts "speedup" "$L" --workload "$W" --workload "$W" --speedup "$s"; then want=1; else want=0; fi
  for cmd in "$E --config naive,,bp" "$S --config naive," "$A --case nope" "$X --out $W"; do
    read -ra argv <<<"$cmd"
    if accepts "--speedup" "${argv[@]}" --speedup "$s"; then got=1; else got=0; fi
    if [ "$got" -ne "$want" ]; then
      echo "FAIL: --speedup '$s': loadgen accepts=$want, ${argv[0]##*/} accepts=$got"
      fails=$((fails + 1))
    fi
  done
done
echo "ok: --speedup forms agree between loadgen and the four scripts"

[ "$fails" -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
