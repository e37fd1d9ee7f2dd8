// A real valkey-server (or redis-server >= 7 where the archive has no Valkey)
// started on a free loopback port for one test or suite, and stopped after.
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

#include <string>

namespace bp::test {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0 and closed).
int FreeLoopbackPort();

// True once something accepts TCP connections on 127.0.0.1:port.
bool WaitForPort(int port, int timeout_ms);

// Path of valkey-server or redis-server on PATH; empty if neither.
std::string FindValkeyBinary();

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
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  const std::string& error() const { return error_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string error_;
};

}  // namespace bp::test
