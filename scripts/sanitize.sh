#!/usr/bin/env bash
# The test suite under sanitizers (docs/fuzzing-and-soak.md has the last
# results). Builds with the system compiler and ccache when present, with
# BP_BUILD_BENCH=OFF, then runs ctest; extra arguments go to ctest.
#
#   scripts/sanitize.sh address  # every ctest test under ASan + UBSan (build-asan/)
#   scripts/sanitize.sh thread   # the multi-threaded parts under TSan (build-tsan/):
#                                # gate client and pool, circuit breaker, engine,
#                                # mockapi server (TSAN_REGEX below)
#   ('asan' and 'tsan' are the same as 'address' and 'thread'.)
#
# A report fails the test that caused it (halt_on_error; UBSan does not
# recover), so the exit status is ctest's. Reports in third-party code are
# suppressed in tests/sanitizers/*.supp, each with its reason.
set -euo pipefail
cd "$(dirname "$0")/.."

# The suites whose code runs on several threads: the gate client (Gate*,
# parameterized ones behind a "Prefix/"), the gate pool, the circuit breaker,
# the engine (Engine*, BpAdmission), the mockapi service and server
# (ServiceTest, HttpTest, StreamPacing, AdminSpeedup, MockApiBinary).
TSAN_REGEX='^([A-Za-z]+/)?(Gate[A-Za-z]*|CircuitBreaker|Engine[A-Za-z]*|BpAdmission|ServiceTest|HttpTest|StreamPacing|AdminSpeedup|MockApiBinary)\.'

# Left out of both runs: EngineCrossPriority compares the classes' OK rates
# and slot time per OK call of a sped-up run paced in real time; the
# sanitizers' slowdown of the client threads changes those (timing-bound, not
# a report: under TSan P1 fell below P3, under ASan bp's slot ms per OK call
# came out 342 against naive's 328 in one of two runs). It runs in the
# normal build.
TSAN_EXCLUDE='^EngineCrossPriority\.'
# Left out of the ASan run: consumer_find_package installs the libraries and
# links them into an outside project compiled without -fsanitize, so the
# sanitizer runtime is missing at its link (it tests packaging, which the
# normal build's run covers). cli_operator_messages runs scripts/experiment.sh,
# which uses the normal build in build/: build it first (scripts/setup.sh).
ASAN_EXCLUDE='^(consumer_find_package$|EngineCrossPriority\.)'

kind="${1:-}"
[ "$#" -gt 0 ] && shift
case "$kind" in
  address|asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=all"
        dir=build-asan; targets=(all) ;;
  thread|tsan) kind=tsan; flags="-fsanitize=thread"; dir=build-tsan
        # Only the test executables holding TSAN_REGEX's suites (and the binaries they start).
        targets=(test_gate test_loadgen test_mockapi) ;;
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "sanitize: expected 'address' or 'thread' (see --help), got '$kind'" >&2; exit 2 ;;
esac

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # Paths relative to the clone, so a fresh clone elsewhere reuses the cache.
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
# Build type "Sanitize" adds no flags of its own: -O1 (fast to compile, still
# fast to run, as the sanitizer manuals advise) with line tables for the reports.
flags="$flags -O1 -g1 -fno-omit-frame-pointer"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Sanitize -DBP_BUILD_BENCH=OFF -DBP_BUILD_TESTS=ON \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" "${launcher[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"
if [ -f tests/node/package-lock.json ] && [ ! -d tests/node/node_modules ]; then
  (cd tests/node && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

supp="$PWD/tests/sanitizers"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
cd "$dir"
if [ "$kind" = tsan ]; then
  ctest --output-on-failure -j "${BP_TEST_JOBS:-2}" -R "$TSAN_REGEX" -E "$TSAN_EXCLUDE" "$@"
else
  ctest --output-on-failure -j "${BP_TEST_JOBS:-2}" -E "$ASAN_EXCLUDE" "$@"
fi
