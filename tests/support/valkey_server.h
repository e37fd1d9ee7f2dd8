// A real valkey-server (the Valkey 9 scripts/setup.sh builds; redis-server 7
// with BP_SERVER=redis) started on a free loopback port for one test or
// suite, and stopped after.
//
//   bp::test::ValkeyServer server;          // starts, waits for PING
//   ASSERT_TRUE(server.running()) << server.error();
//   gate_options.url = server.url();        // "redis://127.0.0.1:PORT"
//   server.Stop(); server.Start();          // same port: simulate an outage
//
// No persistence, no config file; the process is killed in the destructor.
// Not thread-safe: drive it from the test thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace bp::test {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0 and closed).
int FreeLoopbackPort();

// True once something accepts TCP connections on 127.0.0.1:port.
bool WaitForPort(int port, int timeout_ms);

// The server every test and benchmark starts; the shell mirror is
// bp_server_bin in scripts/lib/servers.sh. In this order: BP_SERVER=redis
// picks redis-server on PATH (any other non-empty BP_SERVER: none);
// BP_VALKEY_BIN names a binary; ValkeyCacheDir()/bin/valkey-server (built by
// scripts/setup.sh); valkey-server, then redis-server, on PATH. Empty when
// none is executable. Reads the environment: not thread-safe against setenv.
std::string FindValkeyBinary();

// valkey-cli beside a valkey-server (redis-cli beside a redis-server), else
// valkey-cli or redis-cli on PATH; empty if none.
std::string FindValkeyCli();

// ${XDG_CACHE_HOME:-$HOME/.cache}/backpressure/valkey-9 (setup.sh's Valkey
// build); empty without either variable.
std::string ValkeyCacheDir();

class ValkeyServer {
 public:
  ValkeyServer();  // Start() on a free port
  ~ValkeyServer();
  ValkeyServer(const ValkeyServer&) = delete;
  ValkeyServer& operator=(const ValkeyServer&) = delete;

  bool Start();  // on the same port as before; true once it answers PING
  void Stop();   // SIGTERM, then SIGKILL after 2 s; waits for the process
  void Kill();   // SIGKILL at once (a crash: no shutdown); waits for the process
  bool running() const { return pid_ > 0; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }  // -1 when not running
  // When the last Start() sent its last PING that got no answer (its fork,
  // if the first was answered): the server began answering after this
  // instant, so a time measured from it bounds one measured from the real
  // start from above, however long the loaded box took to start the server.
  std::chrono::steady_clock::time_point last_unanswered_ping() const {
    return last_unanswered_ping_;
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  const std::string& error() const { return error_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string error_;
  std::chrono::steady_clock::time_point last_unanswered_ping_{};
};

}  // namespace bp::test
