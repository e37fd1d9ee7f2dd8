#!/usr/bin/env bash
# Builds the libFuzzer targets (every fuzz/<name>_fuzz.cpp is target
# fuzz_<name>; BP_FUZZ=ON, clang with ASan and UBSan, ccache when present) in
# build-fuzz/ and runs each for a bounded time, starting from the seed and
# regression inputs in tests/fuzz/corpus/<target>/ (shipped configs and
# workloads are added as seeds). New inputs go to build-fuzz/corpus/<target>/;
# a crash leaves build-fuzz/crash-<target>-* and makes the script exit 1: fix
# it and copy the input into tests/fuzz/corpus/<target>/ as a regression input.
#
#   scripts/fuzz.sh              # 60 s per target
#   scripts/fuzz.sh --seconds 30 # shorter
#   scripts/fuzz.sh --replay     # only run the stored corpus once (CI; exit 1 on a crash)
#   scripts/fuzz.sh --seconds 600 --parallel 2  # two targets at a time
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET=60
REPLAY=0
PARALLEL=1
while [ "$#" -gt 0 ]; do
  case "$1" in
    --seconds) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --seconds needs a positive integer" >&2; exit 2; }
      SECONDS_PER_TARGET="$2"; shift 2 ;;
    --replay) REPLAY=1; shift ;;
    --parallel) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --parallel needs a positive integer" >&2; exit 2; }
      PARALLEL="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (apt-get install clang)" >&2; exit 2; }

TARGETS=()
for src in fuzz/*_fuzz.cpp; do
  name="$(basename "$src" _fuzz.cpp)"
  TARGETS+=("fuzz_$name")
done
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # Paths relative to the clone, so a fresh clone elsewhere reuses the cache.
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DBP_FUZZ=ON \
  -DBP_BUILD_TESTS=OFF -DBP_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
# Only the targets and the libraries they link (not the apps).
cmake --build build-fuzz -j "$(nproc)" --target "${TARGETS[@]}"

seeds() {  # target -> extra seed files
  case "$1" in
    fuzz_mockapi_config) ls configs/mockapi/*.json ;;
    fuzz_workload) ls configs/workloads/*.json ;;
  esac
}

# One target: its stored corpus replayed (--replay) or fuzzed for
# SECONDS_PER_TARGET; its output in build-fuzz/<target>.log; fails on a crash.
run_target() {
  local t=$1 corpus="build-fuzz/corpus/$1" stored="tests/fuzz/corpus/${1#fuzz_}"
  if [ "$REPLAY" -eq 1 ]; then
    echo "fuzz: $t: replaying $stored"
    if ! "build-fuzz/fuzz/$t" -runs=0 -timeout=10 -rss_limit_mb=1024 \
        -artifact_prefix="build-fuzz/crash-$t-" "$stored" "$corpus" 2>"build-fuzz/$t.log"; then
      tail -n 40 "build-fuzz/$t.log" >&2
      echo "fuzz: $t FAILED on the stored corpus; see build-fuzz/$t.log" >&2
      return 1
    fi
    return 0
  fi
  echo "fuzz: $t for ${SECONDS_PER_TARGET} s"
  local rc=0
  "build-fuzz/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" -max_len=4096 -timeout=10 \
    -rss_limit_mb=1024 -artifact_prefix="build-fuzz/crash-$t-" -print_final_stats=1 \
    "$corpus" "$stored" 2>"build-fuzz/$t.log" || rc=1
  # The last status line (inputs run, coverage) and the final counts.
  echo "fuzz: $t: $(grep -E '^#[0-9]+' "build-fuzz/$t.log" | tail -n 1)"
  grep -E "^stat::(number_of_executed_units|new_units_added)" "build-fuzz/$t.log" | sed "s/^/fuzz: $t: /" || true
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $t FAILED; see build-fuzz/$t.log and build-fuzz/crash-$t-*" >&2
  fi
  return "$rc"
}

for t in "${TARGETS[@]}"; do
  mkdir -p "build-fuzz/corpus/$t" "tests/fuzz/corpus/${t#fuzz_}"
  while read -r f; do [ -n "$f" ] && cp "$f" "build-fuzz/corpus/$t/"; done < <(seeds "$t")
done
status=0
pids=()
for t in "${TARGETS[@]}"; do
  run_target "$t" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$PARALLEL" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit "$status"
