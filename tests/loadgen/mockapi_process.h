// A mockapi binary on a free loopback port for engine tests, stopped
// (SIGTERM, then SIGKILL after 2 s) in the destructor. The binary is
// $BP_MOCKAPI_BIN, else BP_BINARY_DIR/apps/mockapi; MockapiBinary() is empty
// when neither exists, and tests then fail with kNoMockapi (test_loadgen
// depends on the mockapi target, so a build of the test builds the binary).
// Extra flags follow --host/--port/--threads.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/valkey_server.h"

extern char** environ;

namespace bp::test {

inline constexpr const char* kNoMockapi =
    "no mockapi binary at " BP_BINARY_DIR
    "/apps/mockapi: build the mockapi target (test_loadgen depends on it) or set BP_MOCKAPI_BIN";

inline std::string MockapiBinary() {
  if (const char* env = std::getenv("BP_MOCKAPI_BIN"); env && *env) return env;
  std::string built = BP_BINARY_DIR "/apps/mockapi";
  return std::filesystem::exists(built) ? built : std::string();
}

class MockapiProcess {
 public:
  MockapiProcess(const std::string& binary, std::vector<std::string> extra) {
    port_ = FreeLoopbackPort();
    std::vector<std::string> args = {
        binary, "--host", "127.0.0.1", "--port", std::to_string(port_), "--threads", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, binary.c_str(), nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
    if (pid_ > 0 && !WaitForPort(port_, 5000)) Stop();
  }
  ~MockapiProcess() { Stop(); }
  MockapiProcess(const MockapiProcess&) = delete;
  MockapiProcess& operator=(const MockapiProcess&) = delete;
  bool running() const { return pid_ > 0; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) ::usleep(10000);
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace bp::test
