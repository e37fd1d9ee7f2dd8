#!/usr/bin/env bash
# What a user sees from the binaries and scripts/experiment.sh when a value is
# wrong or help is asked for: JSON errors with line and column, shipped
# workload names, every numeric flag's range in one line, exit codes in every
# --help, and experiment.sh's help, usage error and last line. Usage:
#   tests/cli/operator_messages.sh BUILD_DIR
set -uo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$1"
M="$BUILD/apps/mockapi"
L="$BUILD/apps/loadgen"
B="$BUILD/apps/bpctl"
E="$SRC/scripts/experiment.sh"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE STDERR_SUBSTRING COMMAND...
expect() {
  local code="$1" text="$2" err rc
  shift 2
  err="$(timeout 20 "$@" 2>&1 >/dev/null)"
  rc=$?
  if [ "$rc" -ne "$code" ] || [[ "$err" != *"$text"* ]]; then
    fail "$* -> exit $rc (want $code), stderr:"
    echo "$err" | head -5
  else
    echo "ok: $* -> $rc"
  fi
}

# JSON syntax errors name the line and column (a missing comma on line 3).
printf '{\n  "threads": 1\n  "seed": 2\n}\n' >"$TMP/bad.json"
POS="bad.json: not valid JSON at line 3, column 8: syntax error while parsing object"
expect 2 "$POS" "$M" --config "$TMP/bad.json"
expect 2 "$POS" "$L" --workload "$TMP/bad.json"
expect 3 "$POS" "$B" --valkey redis://127.0.0.1:1 import "$TMP/bad.json"

# Shipped workloads by name; the run gets as far as the --out check.
expect 2 "--out must name a directory" "$L" --workload cross-priority --out ""
expect 2 "cannot run over processes" "$L" --workload join-leave --processes 2
expect 2 "cross-priorty: no such file, and no shipped workload or scenario of that name" \
  "$L" --workload cross-priorty
expect 2 "did you mean cross-priority?" "$L" --workload cross-priorty
mkdir -p "$TMP/configs/workloads"
sed 's/"name": *"overload"/"name": "mine"/' "$SRC/configs/workloads/overload.json" \
  >"$TMP/configs/workloads/mine.json"
expect 2 "--out must name a directory" env BP_CONFIG_DIR="$TMP/configs" "$L" --workload mine --out ""

# Every numeric flag names its range when its value is not a number at all.
W="$SRC/configs/workloads/overload.json"
expect 2 "--speedup must be a number in (0, 1000], got 'fast'" "$L" --workload "$W" --speedup fast
expect 2 "--tn-rps-limit must be a number >= 0 (paper req/s; 0: the workload's request cap), got 'x'" \
  "$L" --workload "$W" --tn-rps-limit x
expect 2 "--tn-rps-limit must be a number >= 0" "$L" --workload "$W" --tn-rps-limit=-1
expect 2 "--repeats must be an integer in [1, 1000], got 'x'" "$L" --workload "$W" --repeats x
expect 2 "--port must be an integer in [0, 65535] (0: ephemeral), got 'x'" "$M" --port x
expect 2 "--threads must be an integer in [1, 64], got 'many'" "$M" --threads many
expect 2 "--overload-share must be a number in [0, 1], got 'half'" "$M" --overload-share half
expect 2 "--latency-min-ms must be a number of ms in [0, 3.6e+06], got '5ms'" "$M" --latency-min-ms 5ms
expect 2 "--body-limit-bytes must be an integer in [1024, 1073741824], got '1k'" \
  "$M" --body-limit-bytes 1k
expect 2 "--seed must be an integer in [0, 9223372036854775807], got '-'" "$M" --seed -
for f in overload-status overload-retry-after-ms completion-tokens latency-max-ms \
  per-output-token-ms read-timeout-ms idle-timeout-ms stream-tick-ms; do
  expect 2 "--$f must be " "$M" "--$f" nope
done
expect 3 "--count: must be an integer in [0, 1000000000], got 'x'" \
  "$B" --valkey redis://127.0.0.1:1 watch --count x
expect 3 "--idle-s" "$B" --valkey redis://127.0.0.1:1 gc --idle-s x
# One line and where the help is, never the whole help.
n="$(timeout 10 "$L" --workload "$W" --speedup fast 2>&1 >/dev/null | wc -l)"
[ "$n" -eq 2 ] || fail "loadgen --speedup fast: $n stderr lines, want 2"
n="$(timeout 10 "$M" --port x 2>&1 >/dev/null | wc -l)"
[ "$n" -eq 1 ] || fail "mockapi --port x: $n stderr lines, want 1"

# Exit codes in every binary's --help.
# Each help text is read whole before grep looks at it: with pipefail, `grep -q`
# closing the pipe early would fail the writer with SIGPIPE and the check.
help_of() { timeout 10 "$@" --help 2>&1 || true; }
for bin in "$M" "$L" "$B"; do
  if help_of "$bin" | grep '^Exit codes: 0 ' >/dev/null; then
    echo "ok: ${bin##*/} --help lists exit codes"
  else
    fail "${bin##*/} --help does not list its exit codes"
  fi
done
help_of "$L" | grep "130 / 143" >/dev/null || fail "loadgen --help lacks the signal exit codes"
help_of "$L" merge | grep "^exit codes: 0 merged; 1 " >/dev/null ||
  fail "loadgen merge --help does not list its exit codes"
help_of "$L" | grep "mockapi or Valkey unreachable" >/dev/null ||
  fail "loadgen --help does not document its runtime failures"

# experiment.sh: the default run's time as measured, a usage error in one
# line, and a last line that mentions figures only when they were made.
help_of "$E" | grep "about 3.5 minutes on 2 cores" >/dev/null ||
  fail "experiment.sh --help does not say 3.5 minutes"
expect 2 "unknown option '--repeat' (see scripts/experiment.sh --help)" "$E" --repeat 3
n="$(timeout 10 "$E" --repeat 3 2>&1 >/dev/null | wc -l)"
[ "$n" -eq 1 ] || fail "experiment.sh --repeat 3: $n stderr lines, want 1"
cat >"$TMP/tiny.json" <<'JSON'
{"name": "tiny", "slots": 2, "run_length_cap_s": 30, "dispatch_latency_ms": 0,
 "tenants": [{"id": "t", "priority": 1, "concurrency": 2, "workflows": 2,
              "prompt_tokens": 10, "max_tokens": 5}],
 "upstream": {"latency": {"min_ms": 0, "max_ms": 0, "per_output_token_ms": 0},
              "limits": [{"dimension": "requests", "limit": 100, "window_s": 1.0}]}}
JSON
for figures in yes no; do
  args=(--no-setup --workload "$TMP/tiny.json" --config naive --speedup 20
    --valkey redis://127.0.0.1:1 --out "$TMP/exp-$figures")
  [ "$figures" = no ] && args+=(--no-figures)
  last="$(cd "$SRC" && timeout 120 "$E" "${args[@]}" 2>/dev/null | tail -1)"
  case "$figures:$last" in
    yes:*"report.md and figures (*.png)") echo "ok: experiment.sh last line names the figures" ;;
    no:*"(no figures: --no-figures)") echo "ok: experiment.sh --no-figures last line" ;;
    *) fail "experiment.sh (figures $figures) last line: $last" ;;
  esac
done

[ "$fails" -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
