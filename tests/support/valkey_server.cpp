#include "support/valkey_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <thread>
#include <vector>

namespace bp::test {
namespace {

int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends PING and expects +PONG (a loading server answers -LOADING).
bool Pong(int port) {
  int fd = ConnectLoopback(port);
  if (fd < 0) return false;
  timeval tv{0, 200000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const char ping[] = "PING\r\n";
  bool ok = ::send(fd, ping, sizeof ping - 1, MSG_NOSIGNAL) == sizeof ping - 1;
  char buf[16] = {};
  ok = ok && ::recv(fd, buf, sizeof buf - 1, 0) > 0 && std::strncmp(buf, "+PONG", 5) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

bool WaitForPort(int port, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ConnectLoopback(port);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

namespace {

bool Executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

// The first of `names` in a PATH folder (plus /usr/bin, /usr/sbin).
std::string FindOnPath(std::initializer_list<const char*> names) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/usr/local/bin";
  dirs += ":/usr/bin:/usr/sbin";
  for (const char* name : names) {
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      std::string candidate = dirs.substr(start, end - start) + "/" + name;
      if (Executable(candidate)) return candidate;
      start = end + 1;
    }
  }
  return {};
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string ValkeyCacheDir() {
  std::string base = Env("XDG_CACHE_HOME");
  if (base.empty() && !Env("HOME").empty()) base = Env("HOME") + "/.cache";
  return base.empty() ? "" : base + "/backpressure/valkey-9";
}

std::string FindValkeyBinary() {
  const std::string forced = Env("BP_SERVER");
  if (forced == "redis") return FindOnPath({"redis-server"});
  if (!forced.empty()) return {};  // unknown value: no server, so the test says so
  const std::string explicit_bin = Env("BP_VALKEY_BIN");
  if (!explicit_bin.empty()) return Executable(explicit_bin) ? explicit_bin : "";
  const std::string cache = ValkeyCacheDir();
  if (!cache.empty() && Executable(cache + "/bin/valkey-server")) return cache + "/bin/valkey-server";
  return FindOnPath({"valkey-server", "redis-server"});
}

std::string FindValkeyCli() {
  const std::string server = FindValkeyBinary();
  const size_t slash = server.rfind('/');
  if (slash != std::string::npos) {
    const std::string dir = server.substr(0, slash + 1);
    const std::string name = server.substr(slash + 1);
    if (name.rfind("valkey-server", 0) == 0 && Executable(dir + "valkey-cli")) return dir + "valkey-cli";
    if (name.rfind("redis-server", 0) == 0 && Executable(dir + "redis-cli")) return dir + "redis-cli";
  }
  return FindOnPath({"valkey-cli", "redis-cli"});
}

ValkeyServer::ValkeyServer() {
  port_ = FreeLoopbackPort();
  Start();
}

ValkeyServer::~ValkeyServer() { Stop(); }

bool ValkeyServer::Start() {
  if (pid_ > 0) return true;
  const std::string binary = FindValkeyBinary();
  if (binary.empty()) {
    error_ = "no valkey-server or redis-server found (run scripts/setup.sh; BP_SERVER is '" +
             Env("BP_SERVER") + "', BP_VALKEY_BIN is '" + Env("BP_VALKEY_BIN") + "')";
    return false;
  }
  const std::string port = std::to_string(port_);
  std::vector<std::string> args = {binary, "--port", port, "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no",
                                   "--daemonize", "no", "--loglevel", "warning",
                                   "--logfile", ""};
  last_unanswered_ping_ = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  if (pid < 0) {
    error_ = "fork failed";
    return false;
  }
  pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto probed = std::chrono::steady_clock::now();
    if (Pong(port_)) return true;
    last_unanswered_ping_ = probed;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = binary + " exited at start (port " + port + " taken?)";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error_ = binary + " did not answer PING within 10 s";
  Stop();
  return false;
}

void ValkeyServer::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void ValkeyServer::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace bp::test
