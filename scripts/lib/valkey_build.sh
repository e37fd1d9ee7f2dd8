# Sourced by scripts/setup.sh (after scripts/lib/servers.sh): gets Valkey 9
# into $(bp_valkey_cache)/bin, the place every test, script and benchmark
# looks first (bp_server_bin here, FindValkeyBinary in tests/support).
#
# Debian 12 ships no Valkey and Debian 13's 8.1 has no hash-field expiry, so
# the upstream tarball of Debian unstable's source package `valkey` is built:
# it carries every dependency (jemalloc, Lua, libvalkey, hdr_histogram), and
# `make BUILD_TLS=no` needs only a C toolchain. It is fetched with apt-get
# through a private sources list (one deb-src line for unstable on the
# archive the machine already uses) and private list and cache folders, so
# the machine's own package lists are untouched. Debian's packaging patches
# (which switch to the system's jemalloc and Lua) are not applied.
#
# Unstable moves: any 9.x it has is accepted. The build is kept until
# BP_VALKEY_REBUILD=1; a failed build is remembered too (so each run does not
# spend minutes failing again) and said loudly on every run.
#
#   bp_valkey_setup    # 0 with Valkey 9 in the cache, 1 otherwise (loud line said)

BP_VALKEY_ARCHIVE="${BP_VALKEY_ARCHIVE:-http://deb.debian.org/debian}"

bp_valkey_say_fallback() {  # reason
  local redis
  redis=$(command -v redis-server || true)
  echo "setup: *** Valkey 9 NOT available ($1); tests, scripts and benchmarks use" \
    "${redis:-no server (redis-server is missing)}${redis:+ ($("$redis" --version | grep -o 'v=[0-9.]*'))}:" \
    "no hash-field expiry (HPEXPIRE/HPTTL); BP_VALKEY_REBUILD=1 scripts/setup.sh retries ***" >&2
}

# Starts `server` on a free loopback port and checks a HPEXPIRE/HPTTL round
# trip with `cli`; the server is stopped before return.
bp_valkey_verify() {  # server cli
  local server=$1 cli=$2 port pid ok=1 dir
  dir=$(mktemp -d -t bp-valkey-verify.XXXXXX)
  port=$(bp_free_port) || return 1
  "$server" --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
    --dir "$dir" --loglevel warning --logfile "$dir/log" &
  pid=$!
  if bp_wait_port "$port" 10; then
    "$cli" -p "$port" HSET bp:verify f v >/dev/null &&
      [ "$("$cli" -p "$port" HPEXPIRE bp:verify 60000 FIELDS 1 f)" = 1 ] &&
      [ "$("$cli" -p "$port" HPTTL bp:verify FIELDS 1 f)" -gt 0 ] 2>/dev/null && ok=0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  return "$ok"
}

bp_valkey_major() {  # server -> its major version ("9"), empty if not Valkey
  "$1" --version 2>/dev/null | sed -n 's/^Valkey server v=\([0-9]*\)\..*/\1/p'
}

# Fetches the source package into $1 (a fresh folder); prints the orig
# tarball's path.
bp_valkey_fetch() {  # work
  local work=$1 apt_opts
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $BP_VALKEY_ARCHIVE unstable main" \
    >"$work/sources.list"
  apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=/nonexistent
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
    -o APT::Sandbox::User="$(id -un)" -qq)
  apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 || return 1
  (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only valkey) >>"$work/apt.log" 2>&1 ||
    return 1
  ls "$work"/src/valkey_*.orig.tar.* 2>/dev/null | head -n 1
}

bp_valkey_setup() {
  local cache work tarball version src major started
  cache=$(bp_valkey_cache)
  mkdir -p "$cache"
  exec 8>"$cache/lock"
  flock 8  # one build at a time; a second setup waits and then finds it built
  if [ "${BP_VALKEY_REBUILD:-0}" = 1 ]; then rm -rf "$cache/bin" "$cache/failed"; fi
  if [ -x "$cache/bin/valkey-server" ]; then
    if [ "$(bp_valkey_major "$cache/bin/valkey-server")" = 9 ] &&
        bp_valkey_verify "$cache/bin/valkey-server" "$cache/bin/valkey-cli"; then
      echo "setup: Valkey $(cat "$cache/version" 2>/dev/null) (built before, checked): $cache/bin"
      flock -u 8
      return 0
    fi
    echo "the cached $cache/bin/valkey-server failed its check (--version 9.x, HPEXPIRE round trip)" \
      >"$cache/failed"
    rm -rf "$cache/bin"
    bp_valkey_say_fallback "$(cat "$cache/failed")"
    flock -u 8
    return 1
  fi
  if [ -s "$cache/failed" ]; then
    bp_valkey_say_fallback "$(cat "$cache/failed")"
    flock -u 8
    return 1
  fi
  started=$(date +%s)
  work="$cache/work"
  rm -rf "$work"
  echo "setup: fetching Valkey 9 from Debian unstable's source package into $cache (once)"
  if ! tarball=$(bp_valkey_fetch "$work") || [ -z "$tarball" ]; then
    cp "$work/apt.log" "$cache/fetch.log" 2>/dev/null || true
    rm -rf "$work"
    bp_valkey_say_fallback "apt-get source valkey from $BP_VALKEY_ARCHIVE unstable failed, see $cache/fetch.log"
    flock -u 8
    return 1
  fi
  version=$(basename "$tarball" | sed -n 's/^valkey_\([0-9][0-9.]*\)\.orig\.tar\..*/\1/p')
  if [ "${version%%.*}" != 9 ]; then
    rm -rf "$work"
    bp_valkey_say_fallback "Debian unstable has valkey ${version:-of unknown version}, not 9.x"
    flock -u 8
    return 1
  fi
  echo "setup: building Valkey $version (make BUILD_TLS=no, a few minutes on 2 cores)"
  tar -xf "$tarball" -C "$work"
  src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'valkey*' | head -n 1)
  if [ -z "$src" ] || ! nice make -C "$src/src" -j2 BUILD_TLS=no valkey-server valkey-cli \
      >"$work/build.log" 2>&1; then
    cp "$work/build.log" "$cache/build.log" 2>/dev/null || true
    echo "make BUILD_TLS=no of Valkey $version failed, see $cache/build.log" >"$cache/failed"
    bp_valkey_say_fallback "$(cat "$cache/failed")"
    flock -u 8
    return 1
  fi
  rm -rf "$cache/bin.new"
  mkdir -p "$cache/bin.new"
  cp "$src/src/valkey-server" "$src/src/valkey-cli" "$cache/bin.new/"
  major=$(bp_valkey_major "$cache/bin.new/valkey-server")
  if [ "$major" != 9 ] || ! bp_valkey_verify "$cache/bin.new/valkey-server" "$cache/bin.new/valkey-cli"; then
    echo "the built Valkey $version failed its check (--version 9.x, HPEXPIRE round trip)" >"$cache/failed"
    rm -rf "$cache/bin.new" "$work"
    bp_valkey_say_fallback "$(cat "$cache/failed")"
    flock -u 8
    return 1
  fi
  rm -rf "$cache/bin"
  mv "$cache/bin.new" "$cache/bin"
  echo "$version" >"$cache/version"
  rm -rf "$work"
  echo "setup: Valkey $version built and checked in $(( $(date +%s) - started )) s: $cache/bin"
  flock -u 8
  return 0
}
