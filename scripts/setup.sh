#!/usr/bin/env bash
# Installs the Debian packages the toolkit needs (skipping what is present),
# builds Valkey 9 once into a cache outside the tree (scripts/lib/valkey_build.sh,
# docs/servers.md) and builds the toolkit into build/. Idempotent: a second run
# installs nothing, reuses the Valkey build and rebuilds only what changed.
#
#   scripts/setup.sh            # install packages + Valkey 9 + configure + build
#   scripts/setup.sh --apps     # the same, building only mockapi, loadgen and bpctl
#                               # (what the experiment and the quick start run;
#                               # the test executables are most of the build)
#   BP_SKIP_BUILD=1 scripts/setup.sh   # packages and Valkey 9 only
#   BP_WERROR=ON scripts/setup.sh      # warnings as errors (CI)
#   BP_VALKEY_REBUILD=1 scripts/setup.sh  # fetch and build Valkey 9 again
set -euo pipefail
cd "$(dirname "$0")/.."

targets=()
case "${1:-}" in
  "") ;;
  --apps) targets=(--target mockapi loadgen bpctl) ;;
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "setup: unknown argument '$1' (known: --apps, --help)" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake pkg-config ccache
  libboost-dev libboost-program-options-dev
  libhiredis-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  redis-server gnuplot-nox wrk nginx-light prometheus
  linux-perf
  nodejs
  redis-tools
  python3-redis python3-pytest
  clang libclang-rt-dev  # scripts/fuzz.sh: libFuzzer and the sanitizer runtimes (CI replays the corpus)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Valkey when the archive has it (Debian 13+); Redis >= 7.0 otherwise.
if apt-cache show valkey-server >/dev/null 2>&1; then
  dpkg-query -W -f='${Status}' valkey-server 2>/dev/null | grep -q "install ok installed" || missing+=(valkey-server)
  # valkey-cli creates the test clusters (redis-tools' redis-cli otherwise).
  if apt-cache show valkey-tools >/dev/null 2>&1; then
    dpkg-query -W -f='${Status}' valkey-tools 2>/dev/null | grep -q "install ok installed" || missing+=(valkey-tools)
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's redis-server, nginx and prometheus (for promtool) packages start system services; the toolkit
# starts its own on free loopback ports, so stop those if they started.
for svc in redis-server nginx valkey-server prometheus; do
  if command -v systemctl >/dev/null 2>&1; then systemctl stop "$svc" >/dev/null 2>&1 || true; fi
  service "$svc" stop >/dev/null 2>&1 || true
done
command -v npm >/dev/null 2>&1 || { echo "setup: npm not found (nodejs package without npm)"; exit 1; }
# The pinned npm packages: the Node gate client and its worker example
# (clients/node), the real-OpenAI-SDK test (tests/node).
for dir in tests/node clients/node; do
  if [ -f "$dir/package-lock.json" ] && [ ! -f "$dir/node_modules/.package-lock.json" -o "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
done

# shellcheck source=lib/servers.sh
source scripts/lib/servers.sh  # bp_valkey_cache, bp_free_port, bp_wait_port
# shellcheck source=lib/valkey_build.sh
source scripts/lib/valkey_build.sh
bp_valkey_setup || true  # a failure said its loud line; Redis 7 serves then

if [ "${BP_SKIP_BUILD:-0}" != 1 ]; then
  # ccache with the clone's root as base dir: a fresh clone on the same machine
  # (as CI makes) reuses the objects another clone compiled.
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBP_WERROR="${BP_WERROR:-OFF}" "${launcher[@]}" >/dev/null
  cmake --build build -j "$(nproc)" "${targets[@]}"
fi
