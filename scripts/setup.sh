#!/usr/bin/env bash
# Installs the Debian packages the toolkit needs (skipping what is present) and
# builds it into build/. Idempotent: a second run installs nothing and rebuilds
# only what changed.
#
#   scripts/setup.sh            # install packages + configure + build
#   BP_SKIP_BUILD=1 scripts/setup.sh   # packages only
#   BP_WERROR=ON scripts/setup.sh      # warnings as errors (CI)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config
  libboost-dev libboost-program-options-dev
  libhiredis-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  redis-server gnuplot-nox wrk nginx-light prometheus
  linux-perf
  nodejs
  redis-tools
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

if [ "${BP_SKIP_BUILD:-0}" != 1 ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBP_WERROR="${BP_WERROR:-OFF}" >/dev/null
  cmake --build build -j "$(nproc)"
fi
