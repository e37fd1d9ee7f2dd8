// The scenario driver (scenario.h): runs a workload's events at their times.
// It reaches what the events change through two small interfaces:
//   ScenarioWorld  outside the engine: the upstream's limits, the outside
//                  client's calls, the gate's weights, the state store
//                  (LiveScenarioWorld, scenario_world.cpp, is the real one);
//   ScenarioEngine the engine's tenants, clock and records (engine_events.cpp).
// Timers run on the engine's io thread; the blocking steps (gate admin
// calls, stopping and restarting the store) run in order on one helper
// thread. Not part of the public API.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bp/loadgen/engine.h"
#include "bp/loadgen/http_client.h"
#include "bp/loadgen/records.h"
#include "bp/loadgen/scenario.h"

namespace bp::loadgen::internal {

// What one step did, for the event's record.
struct ScenarioStep {
  bool applied = false;
  std::string detail;  // said in the log line and EventRecord::detail
};

class ScenarioWorld {
 public:
  virtual ~ScenarioWorld() = default;
  // io thread. New limits for the upstream, in the workload's paper units;
  // `done` runs on the io thread.
  virtual void PutUpstreamLimits(const nlohmann::json& limits,
                                 std::function<void(ScenarioStep)> done) = 0;
  // io thread. One call of the ungated outside client; `done` on the io thread.
  virtual void SendOutsideCall(std::shared_ptr<const std::string> body,
                               std::function<void(const HttpResponse&)> done) = 0;
  // Helper thread (blocking) from here on.
  virtual bool HasGate() const = 0;  // false: weight events are not applicable
  virtual ScenarioStep SetTenantWeight(const std::string& tenant, double weight) = 0;
  virtual ScenarioStep SetPriorityWeights(const std::vector<double>& omega) = 0;
  // Pauses (SIGSTOP) or stops the state store; applied = it is now down.
  virtual ScenarioStep StopStore(OutageMode mode) = 0;
  // Resumes or restarts what StopStore took down and waits until it answers.
  virtual ScenarioStep RestoreStore(OutageMode mode) = 0;
};

// io thread only.
class ScenarioEngine {
 public:
  virtual ~ScenarioEngine() = default;
  virtual int64_t NowUs() const = 0;  // run clock, real us
  virtual void AfterRealUs(int64_t real_us, std::function<void()> fn) = 0;
  virtual bool stopped() const = 0;
  virtual void JoinTenant(int tenant_index) = 0;
  virtual void LeaveTenant(int tenant_index) = 0;
  virtual void RecordOutsideAttempt(AttemptRecord attempt) = 0;
};

class ScenarioDriver {
 public:
  // `label` prefixes the log lines; `model` is the outside client's model.
  // Every reference must outlive the driver.
  ScenarioDriver(const Workload& workload, const TimeScale& scale, boost::asio::io_context& io,
                 ScenarioEngine& engine, ScenarioWorld& world, std::string label,
                 std::string model);
  ~ScenarioDriver();
  ScenarioDriver(const ScenarioDriver&) = delete;
  ScenarioDriver& operator=(const ScenarioDriver&) = delete;

  // Before io.run: starts the helper thread and arms a timer per action.
  void Start();
  // After io.run, on the caller's thread: ends the helper thread, restores an
  // outage still active (a run never leaves the store paused or stopped) and
  // returns what ran, in the order it ran.
  std::vector<EventRecord> Finish();

 private:
  const ScenarioEvent& Event(int i) const;
  EventRecord Record(const ScheduledAction& a, const ScenarioStep& step) const;
  void Log(EventRecord r);
  void Run(const ScheduledAction& a);             // io thread
  void PutLimits(const ScheduledAction& a);       // io thread
  void GateWeights(const ScheduledAction& a);     // io thread
  double OutsideRate() const;                     // paper req/s
  void RestartOutside();                          // io thread
  void ArmOutside(uint64_t generation);           // io thread
  void SendOutside();                             // io thread
  void Outage(const ScheduledAction& a);          // helper thread
  void Restore(int event_index, int64_t due_us);  // helper thread, then Finish
  void Submit(std::function<void()> job);
  void WorkerLoop();

  const Workload& workload_;
  const TimeScale& scale_;
  ScenarioEngine& engine_;
  ScenarioWorld& world_;
  const std::string label_;
  const std::string model_;
  // io thread
  UpstreamCaps caps_;
  std::vector<double> omega_;
  double share_ = 0;
  int64_t outside_prompt_ = 100, outside_max_tokens_ = 50;
  boost::asio::steady_timer outside_timer_;
  uint64_t outside_generation_ = 0;
  double outside_interval_us_ = 0, outside_next_us_ = 0;
  std::shared_ptr<const std::string> outside_body_;
  // helper thread (then Finish)
  int outage_event_ = -1;
  // shared
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::vector<EventRecord> done_;
  std::thread worker_;
};

// The real world of a run: the upstream through the engine's HTTP client,
// the gate through bp::GateAdmin, the store as a local process (valkey_pid
// or valkey_pidfile in EngineOptions). Blocking methods as ScenarioWorld says.
class LiveScenarioWorld final : public ScenarioWorld {
 public:
  // `http` and `options` must outlive it.
  LiveScenarioWorld(HttpClient& http, const EngineOptions& options, GateMode mode);
  void PutUpstreamLimits(const nlohmann::json& limits,
                         std::function<void(ScenarioStep)> done) override;
  void SendOutsideCall(std::shared_ptr<const std::string> body,
                       std::function<void(const HttpResponse&)> done) override;
  bool HasGate() const override { return !options_.gate_target.empty(); }
  ScenarioStep SetTenantWeight(const std::string& tenant, double weight) override;
  ScenarioStep SetPriorityWeights(const std::vector<double>& omega) override;
  ScenarioStep StopStore(OutageMode mode) override;
  ScenarioStep RestoreStore(OutageMode mode) override;

 private:
  int ResolvePid() const;

  HttpClient& http_;
  const EngineOptions& options_;
  const GateMode mode_;
  int pid_ = 0;                       // the store's process (helper thread)
  std::vector<std::string> cmdline_;  // how to start it again after a stop
};

}  // namespace bp::loadgen::internal
