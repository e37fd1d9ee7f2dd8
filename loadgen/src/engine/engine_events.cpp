// Scenario events in the engine (scenario.h, engine.h): a timer per action
// on the io thread; join/leave/outside traffic act on the engine directly,
// upstream limits go to mockapi with the engine's HTTP client, and the
// blocking steps (gate admin calls, stopping and restarting Valkey) run in
// order on one helper thread whose results are merged into the records when
// the run ends. An outage still active at the end is restored before Run
// returns, so a run never leaves Valkey paused or stopped.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "bp/decimal.h"
#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/loadgen/engine.h"
#include "bp/token_estimate.h"
#include "bp/valkey.h"
#include "valkey_process.h"

namespace bp::loadgen {

namespace asio = boost::asio;

using internal::ProcessRunning;
using internal::RestartCommandOf;
using internal::ServerPid;
using internal::SpawnDetached;

class ScenarioDriver {
 public:
  explicit ScenarioDriver(Engine& e) : e_(e), outside_timer_(e.io_) {
    caps_ = e.workload_.caps;
    omega_ = e.workload_.priority_weights;
    pid_ = e.options_.valkey_pid;
  }

  void Start() {
    worker_ = std::thread([this] { WorkerLoop(); });
    for (const ScheduledAction& a : ScheduleEvents(e_.workload_.events, e_.scale())) {
      e_.AfterRealUs(a.at_us, [this, a] { Run(a); });
    }
  }

  // After io.run: an outage still active is restored, the helper finishes.
  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    if (worker_.joinable()) worker_.join();
    if (outage_event_ >= 0) Restore(outage_event_, e_.NowUs());
    std::lock_guard<std::mutex> lock(mu_);
    for (EventRecord& r : done_) e_.records_.events.push_back(std::move(r));
    std::stable_sort(e_.records_.events.begin(), e_.records_.events.end(),
                     [](const EventRecord& a, const EventRecord& b) { return a.at_us < b.at_us; });
  }

 private:
  const ScenarioEvent& Event(int i) const { return e_.workload_.events[static_cast<size_t>(i)]; }

  EventRecord Record(const ScheduledAction& a, bool applied, std::string detail) const {
    EventRecord r;
    r.event_index = a.event_index;
    r.phase = a.phase;
    r.scheduled_us = a.at_us;
    r.at_us = e_.NowUs();
    r.applied = applied;
    r.detail = std::move(detail);
    return r;
  }
  void Log(EventRecord r) {
    const ScenarioEvent& ev = Event(r.event_index);
    spdlog::info("{} paper {:.1f} s: {}{}: {}", e_.options_.label,
                 e_.scale().RealUsToPaperS(r.at_us), EventText(ev),
                 r.phase == 1 ? " (restore)" : "", r.detail);
    std::lock_guard<std::mutex> lock(mu_);
    done_.push_back(std::move(r));
  }

  // ---- io thread
  void Run(const ScheduledAction& a) {
    const ScenarioEvent& ev = Event(a.event_index);
    switch (ev.type) {
      case EventType::kJoin:
        e_.JoinTenant(ev.tenant_index);
        return Log(Record(a, true, "started its workflows"));
      case EventType::kLeave:
        e_.LeaveTenant(ev.tenant_index);
        return Log(Record(a, true, "starts nothing new; queued activities cancelled"));
      case EventType::kOutsideTraffic:
        share_ = ev.share;
        outside_prompt_ = ev.prompt_tokens;
        outside_max_tokens_ = ev.max_tokens;
        RestartOutside();
        return Log(Record(a, true, "outside client at " + FormatShort(OutsideRate()) + " req/s"));
      case EventType::kUpstreamLimits:
        return PutLimits(a);
      case EventType::kTenantWeight:
      case EventType::kClassOmega:
        return GateAdmin(a);
      case EventType::kStateOutage:
        if (a.phase == 0) {
          Submit([this, a] { Outage(a); });
        } else {
          Submit([this, a] {
            if (outage_event_ == a.event_index) Restore(a.event_index, a.at_us);
          });
        }
        return;
    }
  }

  void PutLimits(const ScheduledAction& a) {
    const ScenarioEvent& ev = Event(a.event_index);
    nlohmann::json body = {{"limits", ev.limits}, {"speedup", e_.speedup()}};  // paper units
    auto text = std::make_shared<const std::string>(body.dump());
    e_.http_->Request("PUT", "/admin/config", text, [this, a](HttpResponse r) {
      const bool ok = r.status == 200;
      if (ok) {
        caps_ = Event(a.event_index).caps;
        RestartOutside();
      }
      Log(Record(a, ok,
                 ok ? "mockapi took the new limits (the gate was not told)"
                    : "mockapi answered " + std::to_string(r.status) + ": " + r.error + r.body));
    });
  }

  void GateAdmin(const ScheduledAction& a) {
    const ScenarioEvent& ev = Event(a.event_index);
    if (e_.options_.gate_target.empty()) {
      return Log(Record(a, false, "not applicable: no gate in this configuration"));
    }
    if (ev.type == EventType::kClassOmega) omega_[static_cast<size_t>(ev.priority - 1)] = ev.omega;
    std::vector<double> omega = omega_;
    Submit([this, a, omega] {
      const ScenarioEvent& event = Event(a.event_index);
      bp::GateAdmin gate(GateOptionsFor(1000));
      Status s = event.type == EventType::kTenantWeight
                     ? gate.SetTenantWeight(event.tenant, event.weight)
                     : gate.SetPriorityWeights(omega);
      Log(Record(a, s.ok(), s.ok() ? "written to the gate" : s.message()));
    });
  }

  // ---- outside traffic (io thread)
  double OutsideRate() const { return share_ * caps_.requests_per_s; }  // paper req/s

  void RestartOutside() {
    ++outside_generation_;
    outside_timer_.cancel();
    if (!(OutsideRate() > 0) || e_.stopped_) return;
    outside_body_ = std::make_shared<const std::string>(nlohmann::json{
        {"model", e_.options_.model},
        {"messages", {{{"role", "user"}, {"content", TextOfTokens(outside_prompt_)}}}},
        {"max_tokens", outside_max_tokens_},
        {"user", "outside"}}.dump());
    outside_interval_us_ = 1e6 / (OutsideRate() * e_.speedup());
    outside_next_us_ = static_cast<double>(e_.NowUs());
    ArmOutside(outside_generation_);
  }

  void ArmOutside(uint64_t generation) {
    const int64_t wait = static_cast<int64_t>(outside_next_us_) - e_.NowUs();
    outside_timer_.expires_after(std::chrono::microseconds(std::max<int64_t>(wait, 0)));
    outside_timer_.async_wait([this, generation](boost::system::error_code ec) {
      if (ec || e_.stopped_ || generation != outside_generation_) return;
      SendOutside();
      outside_next_us_ += outside_interval_us_;
      ArmOutside(generation);
    });
  }

  void SendOutside() {
    const int64_t send = e_.NowUs();
    e_.http_->Request(
        "POST", e_.options_.upstream_path, outside_body_, [this, send](HttpResponse r) {
          if (e_.stopped_) return;
          AttemptRecord rec;
          rec.activity_id = -1;
          rec.tenant_index = -1;
          rec.send_us = send;
          rec.done_us = e_.NowUs();
          rec.status = r.status;
          auto doc = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
          if (r.status == 429 && doc.is_object() && doc.contains("error") &&
              doc["error"].is_object() && doc["error"].contains("type") &&
              doc["error"]["type"].is_string()) {
            rec.bound = doc["error"]["type"].get<std::string>();
          }
          // Its use of the token dimension: the usage the upstream reported
          // (OpenAI prompt/completion, Anthropic input/output tokens).
          if (r.status == 200 && doc.is_object() && doc.contains("usage") &&
              doc["usage"].is_object()) {
            const auto& u = doc["usage"];
            rec.tokens = u.value("prompt_tokens", u.value("input_tokens", int64_t{0})) +
                         u.value("completion_tokens", u.value("output_tokens", int64_t{0}));
          }
          e_.records_.outside_attempts.push_back(std::move(rec));
        });
  }

  // ---- helper thread
  GateOptions GateOptionsFor(int timeout_ms) const {
    GateOptions g;
    g.url = e_.options_.valkey_url;
    g.target = e_.options_.gate_target;
    g.mode = e_.workload_.gate_mode;
    g.connect_timeout_ms = timeout_ms;
    g.command_timeout_ms = timeout_ms;
    return g;
  }

  int ResolvePid() const {
    if (!e_.options_.valkey_pidfile.empty()) {
      std::ifstream in(e_.options_.valkey_pidfile);
      int pid = 0;
      if (in >> pid && pid > 0) return pid;
    }
    return pid_;
  }

  void Outage(const ScheduledAction& a) {
    const ScenarioEvent& ev = Event(a.event_index);
    const int pid = ResolvePid();
    if (pid <= 0) {
      return Log(
          Record(a, false,
                 e_.options_.valkey_pidfile.empty()
                     ? "not applied: no --valkey-pid / --valkey-pidfile given"
                     : "not applied: no pid in --valkey-pidfile " + e_.options_.valkey_pidfile));
    }
    if (!ProcessRunning(pid)) {
      return Log(Record(a, false, "not applied: no running process " + std::to_string(pid)));
    }
    // Never signal a process that is not the server at --valkey: a wrong
    // --valkey-pid would otherwise stop (or kill) an unrelated process.
    if (const int served = ServerPid(e_.options_.valkey_url); served > 0 && served != pid) {
      return Log(Record(a, false,
                        "not applied: pid " + std::to_string(pid) +
                            " is not the Valkey server at " +
                            RedactValkeyUrl(e_.options_.valkey_url) + " (its process_id is " +
                            std::to_string(served) + ")"));
    }
    if (ev.mode == OutageMode::kPause) {
      if (::kill(pid, SIGSTOP) != 0) return Log(Record(a, false, "SIGSTOP failed"));
      pid_ = pid;
      outage_event_ = a.event_index;
      return Log(Record(a, true, "SIGSTOP to valkey pid " + std::to_string(pid)));
    }
    // Stop: keep what is needed to bring it back, then SIGTERM and wait.
    cmdline_ = RestartCommandOf(pid, e_.options_.valkey_url);
    if (cmdline_.empty()) {
      return Log(Record(a, false,
                        "not stopped: cannot read how to restart valkey pid " +
                            std::to_string(pid) + " (CONFIG GET at " +
                            RedactValkeyUrl(e_.options_.valkey_url) + ")"));
    }
    if (::kill(pid, SIGTERM) != 0) {
      return Log(Record(a, false, "cannot stop valkey pid " + std::to_string(pid)));
    }
    for (int i = 0; i < 500 && ProcessRunning(pid); ++i) ::usleep(10000);
    pid_ = pid;
    outage_event_ = a.event_index;
    Log(Record(a, true, "SIGTERM to valkey pid " + std::to_string(pid) + ", stopped"));
  }

  // Also called from Finish (after the helper thread ended): one thread at a time.
  void Restore(int event_index, int64_t due_us) {
    const ScenarioEvent& ev = Event(event_index);
    ScheduledAction a{due_us, event_index, 1};
    outage_event_ = -1;
    if (ev.mode == OutageMode::kPause) {
      const bool ok = ::kill(pid_, SIGCONT) == 0;
      return Log(Record(a, ok, ok ? "SIGCONT" : "SIGCONT failed"));
    }
    const int pid = SpawnDetached(cmdline_);
    if (pid <= 0) return Log(Record(a, false, "cannot restart " + cmdline_[0]));
    pid_ = pid;
    bp::GateAdmin gate(GateOptionsFor(200));
    bool up = false;
    for (int i = 0; i < 100 && !up; ++i) {
      up = gate.Ping().ok();
      if (!up) ::usleep(20000);
    }
    // Nothing is re-imported: the gate threads re-seed the emptied target
    // from their declared configuration (GateOptions::declared_config).
    std::string detail = "restarted as pid " + std::to_string(pid);
    if (!up) return Log(Record(a, false, detail + " but it does not answer"));
    Log(Record(a, true, detail));
  }

  void Submit(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

  void WorkerLoop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stop_ and drained
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  Engine& e_;
  // io thread
  UpstreamCaps caps_;
  std::vector<double> omega_;
  double share_ = 0;
  int64_t outside_prompt_ = 100, outside_max_tokens_ = 50;
  asio::steady_timer outside_timer_;
  uint64_t outside_generation_ = 0;
  double outside_interval_us_ = 0, outside_next_us_ = 0;
  std::shared_ptr<const std::string> outside_body_;
  // helper thread (then Finish)
  int pid_ = 0;
  int outage_event_ = -1;
  std::vector<std::string> cmdline_;
  // shared
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::vector<EventRecord> done_;
  std::thread worker_;
};

void Engine::ScenarioDriverDelete::operator()(ScenarioDriver* d) const { delete d; }

void Engine::StartScenario() {
  if (workload_.events.empty()) return;
  scenario_.reset(new ScenarioDriver(*this));
  scenario_->Start();
}

void Engine::FinishScenario() {
  if (scenario_) scenario_->Finish();
}

void Engine::JoinTenant(int t) {
  records_.tenants[t].join_us = NowUs();
  StartTenant(t);
}

void Engine::LeaveTenant(int t) {
  TenantState& ts = tenants_[t];
  if (ts.left) return;
  ts.left = true;
  TenantInfo& info = records_.tenants[t];
  info.leave_us = NowUs();
  // Only what was scheduled so far remains to be done (completed or cancelled).
  activities_total_ -= info.total_activities - ts.scheduled_activities;
  info.total_activities = ts.scheduled_activities;
  if (ts.done_activities == info.total_activities && info.finish_us < 0) {
    info.finish_us = info.leave_us;
  }
  if (activities_done_ >= activities_total_) Stop();
}

void Engine::CancelActivity(int64_t activity_id) {
  records_.activities[activity_id].cancelled = true;
  OnActivityDone(activity_id, false);
}

}  // namespace bp::loadgen
