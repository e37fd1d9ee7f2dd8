// Workload names, the bpctl status command and the upstream snapshot
// (operator_aids.h).
#include "bp/loadgen/operator_aids.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "bp/closest_names.h"
#include "bp/gate.h"
#include "bp/loadgen/http_client.h"

namespace bp::loadgen {
namespace fs = std::filesystem;

std::vector<std::string> ConfigSearchDirs() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("BP_CONFIG_DIR"); env && *env) candidates.push_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back((exe.parent_path() / ".." / "share/backpressure/configs").string());
#ifdef BP_CONFIG_SOURCE_DIR
  candidates.push_back(BP_CONFIG_SOURCE_DIR);
#endif
  std::vector<std::string> dirs;
  for (const std::string& d : candidates) {
    if (fs::is_directory(d, ec)) dirs.push_back(fs::weakly_canonical(d, ec).string());
  }
  return dirs;
}

Result<std::string> ResolveWorkloadArg(const std::string& arg,
                                       const std::vector<std::string>& dirs) {
  std::error_code ec;
  const bool is_name = ValidTenantName(arg) && !fs::exists(arg, ec) &&
                       !(arg.size() >= 5 && arg.compare(arg.size() - 5, 5, ".json") == 0);
  if (!is_name) return arg;  // a path: LoadWorkload names any problem with it
  std::vector<std::string> shipped;
  for (const std::string& dir : dirs) {
    for (const char* kind : {"workloads", "scenarios"}) {
      const fs::path file = fs::path(dir) / kind / (arg + ".json");
      if (fs::is_regular_file(file, ec)) return file.string();
      for (const auto& e : fs::directory_iterator(fs::path(dir) / kind, ec)) {
        if (e.path().extension() == ".json") shipped.push_back(e.path().stem().string());
      }
    }
  }
  std::string searched;
  for (const std::string& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
  std::string message = arg + ": no such file, and no shipped workload or scenario of that name";
  message += dirs.empty() ? " (no configs folder found; set BP_CONFIG_DIR)"
                          : " (searched workloads/ and scenarios/ in " + searched + ")";
  const std::vector<std::string> near = ClosestNames(arg, shipped);
  if (!near.empty()) {
    message += "; did you mean";
    for (size_t i = 0; i < near.size(); ++i) message += (i ? ", " : " ") + near[i];
    message += "?";
  }
  return Status::NotFound(message);
}

std::string BpctlStatusCommand(const std::string& valkey_url, const std::string& target) {
  std::string url = valkey_url;
  bool had_credentials = false;
  if (const size_t scheme = url.find("://"); scheme != std::string::npos) {
    const size_t host = scheme + 3;
    const size_t end = url.find_first_of("/?", host);
    const size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
    if (at != std::string::npos && at >= host) {
      url.erase(host, at + 1 - host);
      had_credentials = true;
    }
  }
  std::string command = "bpctl --valkey " + url + " --target " + target + " status";
  if (had_credentials) command += " (add the user and password of --valkey to the URL)";
  return command;
}

Result<UpstreamConfigSnapshot> UpstreamConfigSnapshot::Take(const std::string& upstream_url) {
  auto endpoint = ParseHttpUrl(upstream_url);
  if (!endpoint.ok()) return endpoint.status();
  HttpResponse r = HttpRequestBlocking(*endpoint, "GET", "/admin/config", "", 5000);
  if (r.status == 0) {
    return Status::Unavailable("mockapi at " + upstream_url +
                               " did not answer GET /admin/config: " + r.error);
  }
  if (r.status != 200) {
    return Status::Internal("mockapi at " + upstream_url +
                            " answered GET /admin/config with HTTP " + std::to_string(r.status));
  }
  UpstreamConfigSnapshot s;
  s.url_ = upstream_url;
  s.body_ = r.body;
  return s;
}

Status UpstreamConfigSnapshot::Restore() const {
  auto endpoint = ParseHttpUrl(url_);
  if (!endpoint.ok()) return endpoint.status();
  HttpResponse r = HttpRequestBlocking(*endpoint, "PUT", "/admin/config", body_, 5000);
  if (r.status == 0) {
    return Status::Unavailable("mockapi at " + url_ +
                               " did not answer PUT /admin/config: " + r.error);
  }
  if (r.status != 200) {
    return Status::Internal("mockapi at " + url_ + " refused its own configuration back (HTTP " +
                            std::to_string(r.status) + "): " + r.body);
  }
  return Status::Ok();
}

namespace {

int g_signal_pipe[2] = {-1, -1};

extern "C" void OnStopSignal(int signal) {
  const unsigned char byte = static_cast<unsigned char>(signal);
  [[maybe_unused]] const ssize_t n = ::write(g_signal_pipe[1], &byte, 1);  // async-signal-safe
}

}  // namespace

void RestoreUpstreamOnSignal(const UpstreamConfigSnapshot* snapshot) {
  if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;  // no restore on a signal; the runs go on
  std::thread([snapshot] {
    unsigned char signal = 0;
    while (::read(g_signal_pipe[0], &signal, 1) != 1) {
    }
    const Status s = snapshot->Restore();
    std::cerr << "loadgen: stopped by signal " << int{signal} << "; "
              << (s.ok() ? "restored mockapi's configuration at " + snapshot->url()
                         : "could not restore mockapi's configuration: " + s.message())
              << std::endl;
    ::_exit(128 + signal);
  }).detach();
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace bp::loadgen
