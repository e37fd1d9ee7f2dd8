# bench/lib.sh - helpers the benchmark scripts share (sourced, not run).
# Loopback only. Needs python3 (free ports) and /proc (CPU time).

# A temporary folder $TMP (mktemp -t PREFIX.XXXXXX) and the process list
# PIDS; on exit (or Ctrl-C) every process in PIDS gets TERM and is waited for,
# and $TMP is removed unless BP_KEEP_TMP is set.
bench_tempdir() {
  TMP="$(mktemp -d -t "$1.XXXXXX")"
  PIDS=()
  trap bench_cleanup EXIT
  trap 'echo "interrupted" >&2; exit 130' INT TERM
}
bench_cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "${BP_KEEP_TMP:-}" ] || rm -rf "$TMP"
}

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits up to 5 s until something listens on 127.0.0.1:$1; else says so and fails.
wait_port() {
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "nothing listens on $1" >&2
  return 1
}

# CPU time (user + system, clock ticks) used so far by the processes $@.
cpu_ticks() {
  local total=0 pid fields
  for pid in "$@"; do
    fields=$(cut -d' ' -f14,15 "/proc/$pid/stat")
    total=$(( total + ${fields% *} + ${fields#* } ))
  done
  echo "$total"
}

# Writes $TMP/nginx.conf: $THREADS workers serving $TMP/www/chat.json as
# POST /v1/chat/completions on 127.0.0.1:$1, keep-alive, no access log.
write_nginx_conf() {
  cat >"$TMP/nginx.conf" <<NGINX
worker_processes $THREADS;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $TMP/body; proxy_temp_path $TMP/proxy;
  fastcgi_temp_path $TMP/fcgi; uwsgi_temp_path $TMP/uwsgi; scgi_temp_path $TMP/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$1;
    location = /v1/chat/completions { default_type application/json; alias $TMP/www/chat.json; }
  }
}
NGINX
}
