// The real world of a scenario (scenario_driver.h LiveScenarioWorld):
// mockapi's limits and the outside client over the engine's HTTP client, the
// gate's weights through bp::GateAdmin, and the store as a local process
// paused with SIGSTOP or stopped with SIGTERM and started again as it ran.
#include <signal.h>
#include <unistd.h>

#include <fstream>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "scenario_driver.h"
#include "valkey_process.h"

namespace bp::loadgen::internal {

namespace {

GateOptions GateOptionsFor(const EngineOptions& options, GateMode mode, int timeout_ms) {
  GateOptions g;
  g.url = options.valkey_url;
  g.target = options.gate_target;
  g.mode = mode;
  g.connect_timeout_ms = timeout_ms;
  g.command_timeout_ms = timeout_ms;
  return g;
}

ScenarioStep FromStatus(const Status& s) {
  return {s.ok(), s.ok() ? "written to the gate" : s.message()};
}

}  // namespace

LiveScenarioWorld::LiveScenarioWorld(HttpClient& http, const EngineOptions& options, GateMode mode)
    : http_(http), options_(options), mode_(mode), pid_(options.valkey_pid) {}

void LiveScenarioWorld::PutUpstreamLimits(const nlohmann::json& limits,
                                          std::function<void(ScenarioStep)> done) {
  // mockapi takes paper units with the run's speedup.
  nlohmann::json body = {{"limits", limits}, {"speedup", options_.scale.speedup()}};
  auto text = std::make_shared<const std::string>(body.dump());
  http_.Request("PUT", "/admin/config", text, [done = std::move(done)](HttpResponse r) {
    const bool ok = r.status == 200;
    done({ok, ok ? "mockapi took the new limits (the gate was not told)"
                 : "mockapi answered " + std::to_string(r.status) + ": " + r.error + r.body});
  });
}

void LiveScenarioWorld::SendOutsideCall(std::shared_ptr<const std::string> body,
                                        std::function<void(const HttpResponse&)> done) {
  http_.Request("POST", options_.upstream_path, std::move(body),
                [done = std::move(done)](HttpResponse r) { done(r); });
}

ScenarioStep LiveScenarioWorld::SetTenantWeight(const std::string& tenant, double weight) {
  bp::GateAdmin gate(GateOptionsFor(options_, mode_, 1000));
  return FromStatus(gate.SetTenantWeight(tenant, weight));
}

ScenarioStep LiveScenarioWorld::SetPriorityWeights(const std::vector<double>& omega) {
  bp::GateAdmin gate(GateOptionsFor(options_, mode_, 1000));
  return FromStatus(gate.SetPriorityWeights(omega));
}

int LiveScenarioWorld::ResolvePid() const {
  if (!options_.valkey_pidfile.empty()) {
    std::ifstream in(options_.valkey_pidfile);
    int pid = 0;
    if (in >> pid && pid > 0) return pid;
  }
  return pid_;
}

ScenarioStep LiveScenarioWorld::StopStore(OutageMode mode) {
  const int pid = ResolvePid();
  if (pid <= 0) {
    return {false, options_.valkey_pidfile.empty()
                       ? "not applied: no --valkey-pid / --valkey-pidfile given"
                       : "not applied: no pid in --valkey-pidfile " + options_.valkey_pidfile};
  }
  if (!ProcessRunning(pid))
    return {false, "not applied: no running process " + std::to_string(pid)};
  // Never signal a process that is not the server at --valkey: a wrong
  // --valkey-pid would otherwise stop (or kill) an unrelated process.
  if (const int served = ServerPid(options_.valkey_url); served > 0 && served != pid) {
    return {false, "not applied: pid " + std::to_string(pid) + " is not the Valkey server at " +
                       RedactValkeyUrl(options_.valkey_url) + " (its process_id is " +
                       std::to_string(served) + ")"};
  }
  if (mode == OutageMode::kPause) {
    if (::kill(pid, SIGSTOP) != 0) return {false, "SIGSTOP failed"};
    pid_ = pid;
    return {true, "SIGSTOP to valkey pid " + std::to_string(pid)};
  }
  // Stop: keep what is needed to bring it back, then SIGTERM and wait.
  cmdline_ = RestartCommandOf(pid, options_.valkey_url);
  if (cmdline_.empty()) {
    return {false, "not stopped: cannot read how to restart valkey pid " + std::to_string(pid) +
                       " (CONFIG GET at " + RedactValkeyUrl(options_.valkey_url) + ")"};
  }
  if (::kill(pid, SIGTERM) != 0) return {false, "cannot stop valkey pid " + std::to_string(pid)};
  for (int i = 0; i < 500 && ProcessRunning(pid); ++i) ::usleep(10000);
  pid_ = pid;
  return {true, "SIGTERM to valkey pid " + std::to_string(pid) + ", stopped"};
}

ScenarioStep LiveScenarioWorld::RestoreStore(OutageMode mode) {
  if (mode == OutageMode::kPause) {
    const bool ok = ::kill(pid_, SIGCONT) == 0;
    return {ok, ok ? "SIGCONT" : "SIGCONT failed"};
  }
  const int pid = SpawnDetached(cmdline_);
  if (pid <= 0) return {false, "cannot restart " + cmdline_[0]};
  pid_ = pid;
  bp::GateAdmin gate(GateOptionsFor(options_, mode_, 200));
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = gate.Ping().ok();
    if (!up) ::usleep(20000);
  }
  // Nothing is re-imported: the gate threads re-seed the emptied target
  // from their declared configuration (GateOptions::declared_config).
  const std::string detail = "restarted as pid " + std::to_string(pid);
  if (!up) return {false, detail + " but it does not answer"};
  return {true, detail};
}

}  // namespace bp::loadgen::internal
