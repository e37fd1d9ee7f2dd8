#include "support/valkey_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "bp/valkey.h"
#include "bp/valkey_cluster.h"
#include "support/valkey_server.h"

namespace bp::test {
namespace {

bool PortFree(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// Runs argv to completion (output to `log`); its exit code, or -1.
int RunProcess(std::vector<std::string> args, const std::string& log, int timeout_ms) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(args[0].c_str(), argv.data());
    ::_exit(127);
  }
  if (pid < 0) return -1;
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

Result<ValkeyReply> Ask(int port, const std::vector<std::string>& args) {
  ValkeyConnection c(ValkeyOptions{"redis://127.0.0.1:" + std::to_string(port), 1000, 5000});
  return c.Command(args);
}

std::string ReplyError(const Result<ValkeyReply>& r, const std::string& what) {
  if (!r.ok()) return what + ": " + r.status().ToString();
  if (r->is_error()) return what + ": " + r->str;
  return "";
}

}  // namespace

ValkeyTestCluster::ValkeyTestCluster() : ports_(kNodes, 0), pids_(kNodes, -1) {
  server_binary_ = FindValkeyBinary();
  cli_binary_ = FindValkeyCli();
  if (server_binary_.empty() || cli_binary_.empty()) {
    error_ = "valkey-server/redis-server and valkey-cli/redis-cli are needed (scripts/setup.sh)";
    return;
  }
  char tmpl[] = "/tmp/bp-cluster-XXXXXX";
  if (!::mkdtemp(tmpl)) {
    error_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> pick(20000, 29999);
  for (int i = 0; i < kNodes; ++i) {
    // A port p with p + 10000 (the bus) free too; tests running in parallel
    // may take one between the check and the start, so retry a few times.
    for (int attempt = 0; attempt < 5 && pids_[i] <= 0; ++attempt) {
      ports_[i] = 0;
      for (int tries = 0; tries < 200 && ports_[i] == 0; ++tries) {
        const int p = pick(rng);
        bool taken = false;
        for (int j = 0; j < i; ++j) taken = taken || ports_[j] == p;
        if (!taken && PortFree(p) && PortFree(p + 10000)) ports_[i] = p;
      }
      if (ports_[i] != 0) StartNode(i);
    }
    if (pids_[i] <= 0) {
      if (error_.empty()) error_ = "no free port pair (p, p + 10000) in 20000-29999";
      return;
    }
    error_.clear();
  }
  std::vector<std::string> create = {cli_binary_, "--cluster", "create"};
  for (int p : ports_) create.push_back("127.0.0.1:" + std::to_string(p));
  for (const char* a : {"--cluster-replicas", "0", "--cluster-yes"}) create.push_back(a);
  const std::string log = dir_ + "/create.log";
  if (int rc = RunProcess(create, log, 30000); rc != 0) {
    error_ = "cluster create exited " + std::to_string(rc) + " (see " + log + ")";
    return;
  }
  if (!WaitClusterOk(20000)) error_ = "cluster_state:ok not reached within 20 s";
}

ValkeyTestCluster::~ValkeyTestCluster() {
  for (int i = 0; i < kNodes; ++i) StopNode(i);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string ValkeyTestCluster::url() const {
  std::string out = "redis+cluster://";
  for (int i = 0; i < kNodes; ++i) {
    if (i > 0) out += ",";
    out += "127.0.0.1:" + std::to_string(ports_[i]);
  }
  return out;
}

bool ValkeyTestCluster::StartNode(int node) {
  if (pids_[node] > 0) return true;
  const std::string port = std::to_string(ports_[node]);
  std::vector<std::string> args = {server_binary_,
                                   "--port",
                                   port,
                                   "--bind",
                                   "127.0.0.1",
                                   "--cluster-enabled",
                                   "yes",
                                   "--cluster-config-file",
                                   dir_ + "/nodes-" + port + ".conf",
                                   "--cluster-node-timeout",
                                   "2000",
                                   "--cluster-require-full-coverage",
                                   "no",
                                   "--dir",
                                   dir_,
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--daemonize",
                                   "no",
                                   "--loglevel",
                                   "warning",
                                   "--logfile",
                                   dir_ + "/node-" + port + ".log"};
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(args[0].c_str(), argv.data());
    ::_exit(127);
  }
  if (pid < 0) {
    error_ = "fork failed";
    return false;
  }
  pids_[node] = pid;
  for (int waited = 0; waited < 10000; waited += 20) {
    auto r = Ask(ports_[node], {"PING"});
    if (r.ok() && r->AsString() == "PONG") return true;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      pids_[node] = -1;
      error_ = "node on port " + port + " exited at start";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error_ = "node on port " + port + " did not answer PING within 10 s";
  StopNode(node);
  return false;
}

void ValkeyTestCluster::StopNode(int node) {
  pid_t pid = pids_[node];
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pids_[node] = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  pids_[node] = -1;
}

bool ValkeyTestCluster::WaitClusterOk(int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    bool all = true;
    for (int i = 0; i < kNodes && all; ++i) {
      auto info = Ask(ports_[i], {"CLUSTER", "INFO"});
      all = info.ok() && info->AsString().find("cluster_state:ok") != std::string::npos;
      // Every node must also know all three primaries' ranges.
      auto slots = all ? Ask(ports_[i], {"CLUSTER", "SLOTS"}) : info;
      auto ranges = slots.ok() ? ParseClusterSlots(*slots, "127.0.0.1") : slots.status();
      int covered = 0;
      if (ranges.ok()) {
        for (const auto& r : *ranges) covered += r.last - r.first + 1;
      }
      all = all && covered == kClusterSlots;
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

int ValkeyTestCluster::OwnerOf(int slot) const {
  for (int i = 0; i < kNodes; ++i) {
    if (pids_[i] <= 0) continue;
    auto r = Ask(ports_[i], {"CLUSTER", "SLOTS"});
    if (!r.ok()) continue;
    auto ranges = ParseClusterSlots(*r, "127.0.0.1");
    if (!ranges.ok()) return -1;
    for (const auto& range : *ranges) {
      if (slot < range.first || slot > range.last) continue;
      for (int j = 0; j < kNodes; ++j) {
        if (ports_[j] == range.port) return j;
      }
    }
    return -1;
  }
  return -1;
}

std::string ValkeyTestCluster::NodeId(int node) const {
  auto r = Ask(ports_[node], {"CLUSTER", "MYID"});
  return r.ok() ? r->AsString() : "";
}

long long ValkeyTestCluster::CommandCalls(int node, const std::string& command) const {
  auto r = Ask(ports_[node], {"INFO", "commandstats"});
  if (!r.ok()) return -1;
  const std::string text = r->AsString();
  const std::string key = "cmdstat_" + command + ":calls=";
  const size_t at = text.find(key);
  return at == std::string::npos ? 0 : std::atoll(text.c_str() + at + key.size());
}

std::string ValkeyTestCluster::MigrateSlot(int slot, int to, int ask_window_ms) {
  std::string e = BeginMigration(slot, to);
  if (!e.empty()) return e;
  if (ask_window_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ask_window_ms));
  return FinishMigration(slot, to);
}

std::string ValkeyTestCluster::BeginMigration(int slot, int to) {
  const int from = OwnerOf(slot);
  if (from < 0 || from == to) return "slot " + std::to_string(slot) + ": bad source";
  const std::string from_id = NodeId(from), to_id = NodeId(to), s = std::to_string(slot);
  std::string e = ReplyError(Ask(ports_[to], {"CLUSTER", "SETSLOT", s, "IMPORTING", from_id}),
                             "SETSLOT IMPORTING");
  if (!e.empty()) return e;
  ValkeyConnection src(ValkeyOptions{node_url(from), 1000, 5000});
  auto keys = src.Command({"CLUSTER", "GETKEYSINSLOT", s, "100000"});
  if (e = ReplyError(keys, "GETKEYSINSLOT"); !e.empty()) return e;
  std::vector<std::string> migrate = {"MIGRATE", "127.0.0.1", std::to_string(ports_[to]), "", "0",
                                      "5000",    "KEYS"};
  for (const auto& k : keys->elements) migrate.push_back(k.AsString());
  std::vector<std::vector<std::string>> tx = {{"MULTI"},
                                              {"CLUSTER", "SETSLOT", s, "MIGRATING", to_id}};
  if (!keys->elements.empty()) tx.push_back(migrate);
  tx.push_back({"EXEC"});
  for (const auto& cmd : tx) {
    auto r = src.Command(cmd);
    if (e = ReplyError(r, cmd[0]); !e.empty()) return e;
    for (const auto& el : r->elements) {  // EXEC: each queued command's reply
      if (el.is_error()) return "in MULTI: " + el.str;
    }
  }
  // Keys created on the source between GETKEYSINSLOT and EXEC (new tickets):
  // once MIGRATING, the source runs no script of this slot, so they are stable.
  keys = src.Command({"CLUSTER", "GETKEYSINSLOT", s, "100000"});
  if (e = ReplyError(keys, "GETKEYSINSLOT"); !e.empty()) return e;
  if (!keys->elements.empty()) {
    migrate.resize(7);
    for (const auto& k : keys->elements) migrate.push_back(k.AsString());
    if (e = ReplyError(src.Command(migrate), "MIGRATE"); !e.empty()) return e;
  }
  migrating_from_ = from;
  return "";
}

std::string ValkeyTestCluster::FinishMigration(int slot, int to) {
  const int from = migrating_from_;
  if (from < 0) return "no migration begun";
  migrating_from_ = -1;
  const std::string to_id = NodeId(to), s = std::to_string(slot);
  std::string e;
  for (int n : {to, from, 3 - to - from}) {
    e = ReplyError(Ask(ports_[n], {"CLUSTER", "SETSLOT", s, "NODE", to_id}), "SETSLOT NODE");
    if (!e.empty()) return e;
  }
  return "";
}

}  // namespace bp::test
