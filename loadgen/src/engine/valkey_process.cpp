// Valkey process control for scenario outages (valkey_process.h).
#include "valkey_process.h"

#include <fcntl.h>
#include <spawn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bp/valkey.h"

extern char** environ;

namespace bp::loadgen::internal {

bool ProcessRunning(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return false;
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

std::vector<std::string> RestartCommandOf(int pid, const std::string& url) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  if (ec) return {};
  std::string title;
  {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::getline(in, title, '\0');
  }
  std::string arg0 = title.substr(0, title.find(' '));
  if (arg0.empty()) arg0 = exe.string();
  ValkeyOptions o;
  o.url = url;
  o.connect_timeout_ms = 1000;
  o.command_timeout_ms = 1000;
  ValkeyConnection c(o);
  std::vector<std::string> argv = {exe.string(), arg0};
  for (const char* key : {"port", "bind", "save", "appendonly", "dir", "logfile", "pidfile",
                          "loglevel", "unixsocket", "requirepass"}) {
    auto r = c.Command({"CONFIG", "GET", key});
    if (!r.ok() || r->elements.size() != 2) {
      if (std::string(key) == "port") return {};  // not answering: cannot rebuild
      continue;
    }
    const std::string value = r->elements[1].AsString();
    if (value.empty() && std::string(key) != "save") continue;
    argv.push_back(std::string("--") + key);
    if (std::string(key) == "bind") {  // "127.0.0.1 -::1": one argument each
      std::istringstream words(value);
      for (std::string w; words >> w;) argv.push_back(w);
    } else {
      argv.push_back(value);
    }
  }
  argv.push_back("--daemonize");
  argv.push_back("no");
  return argv;
}

int ServerPid(const std::string& url) {
  auto parsed = ParseValkeyUrl(url);
  if (!parsed.ok() || parsed->cluster) return -1;
  ValkeyOptions o;
  o.url = url;
  o.connect_timeout_ms = 1000;
  o.command_timeout_ms = 1000;
  ValkeyConnection c(o);
  auto r = c.Command({"INFO", "server"});
  if (!r.ok() || r->is_error()) return -1;
  const std::string text = r->AsString();
  const std::string field = "process_id:";
  const size_t at = text.find(field);
  if (at == std::string::npos) return -1;
  const int pid = std::atoi(text.c_str() + at + field.size());
  return pid > 0 ? pid : -1;
}

int SpawnDetached(std::vector<std::string> command) {
  if (command.size() < 2) return -1;
  std::vector<char*> argv;  // command[0] is the executable, argv from [1]
  for (size_t i = 1; i < command.size(); ++i) argv.push_back(command[i].data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);  // not in loadgen's Ctrl-C group
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, command[0].c_str(), &files, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? static_cast<int>(pid) : -1;
}

}  // namespace bp::loadgen::internal
