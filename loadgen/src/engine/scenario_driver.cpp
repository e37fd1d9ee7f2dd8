// The scenario driver (scenario_driver.h): a timer per scheduled action on
// the io thread; join and leave act on the engine, upstream limits and the
// outside client go through the world on the io thread, and the blocking
// steps (gate weights, the store's outage and restore) run in order on one
// helper thread whose records are returned when the run ends.
#include "scenario_driver.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "bp/decimal.h"
#include "bp/token_estimate.h"

namespace bp::loadgen::internal {

ScenarioDriver::ScenarioDriver(const Workload& workload, const TimeScale& scale,
                               boost::asio::io_context& io, ScenarioEngine& engine,
                               ScenarioWorld& world, std::string label, std::string model)
    : workload_(workload),
      scale_(scale),
      engine_(engine),
      world_(world),
      label_(std::move(label)),
      model_(std::move(model)),
      caps_(workload.caps),
      omega_(workload.priority_weights),
      outside_timer_(io) {}

ScenarioDriver::~ScenarioDriver() {
  if (worker_.joinable()) Finish();
}

void ScenarioDriver::Start() {
  worker_ = std::thread([this] { WorkerLoop(); });
  for (const ScheduledAction& a : ScheduleEvents(workload_.events, scale_)) {
    engine_.AfterRealUs(a.at_us, [this, a] { Run(a); });
  }
}

std::vector<EventRecord> ScenarioDriver::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (worker_.joinable()) worker_.join();
  if (outage_event_ >= 0) Restore(outage_event_, engine_.NowUs());
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<EventRecord> out = std::move(done_);
  done_.clear();
  std::stable_sort(out.begin(), out.end(),
                   [](const EventRecord& a, const EventRecord& b) { return a.at_us < b.at_us; });
  return out;
}

const ScenarioEvent& ScenarioDriver::Event(int i) const {
  return workload_.events[static_cast<size_t>(i)];
}

EventRecord ScenarioDriver::Record(const ScheduledAction& a, const ScenarioStep& step) const {
  EventRecord r;
  r.event_index = a.event_index;
  r.phase = a.phase;
  r.scheduled_us = a.at_us;
  r.at_us = engine_.NowUs();
  r.applied = step.applied;
  r.detail = step.detail;
  return r;
}

void ScenarioDriver::Log(EventRecord r) {
  const ScenarioEvent& ev = Event(r.event_index);
  spdlog::info("{} paper {:.1f} s: {}{}: {}", label_, scale_.RealUsToPaperS(r.at_us), EventText(ev),
               r.phase == 1 ? " (restore)" : "", r.detail);
  std::lock_guard<std::mutex> lock(mu_);
  done_.push_back(std::move(r));
}

void ScenarioDriver::Run(const ScheduledAction& a) {
  const ScenarioEvent& ev = Event(a.event_index);
  switch (ev.type) {
    case EventType::kJoin:
      engine_.JoinTenant(ev.tenant_index);
      return Log(Record(a, {true, "started its workflows"}));
    case EventType::kLeave:
      engine_.LeaveTenant(ev.tenant_index);
      return Log(Record(a, {true, "starts nothing new; queued activities cancelled"}));
    case EventType::kOutsideTraffic:
      share_ = ev.share;
      outside_prompt_ = ev.prompt_tokens;
      outside_max_tokens_ = ev.max_tokens;
      RestartOutside();
      return Log(Record(a, {true, "outside client at " + FormatShort(OutsideRate()) + " req/s"}));
    case EventType::kUpstreamLimits:
      return PutLimits(a);
    case EventType::kTenantWeight:
    case EventType::kClassOmega:
      return GateWeights(a);
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

void ScenarioDriver::PutLimits(const ScheduledAction& a) {
  world_.PutUpstreamLimits(Event(a.event_index).limits, [this, a](ScenarioStep step) {
    if (step.applied) {
      caps_ = Event(a.event_index).caps;
      RestartOutside();
    }
    Log(Record(a, step));
  });
}

void ScenarioDriver::GateWeights(const ScheduledAction& a) {
  const ScenarioEvent& ev = Event(a.event_index);
  if (!world_.HasGate()) {
    return Log(Record(a, {false, "not applicable: no gate in this configuration"}));
  }
  if (ev.type == EventType::kClassOmega) omega_[static_cast<size_t>(ev.priority - 1)] = ev.omega;
  std::vector<double> omega = omega_;
  Submit([this, a, omega] {
    const ScenarioEvent& event = Event(a.event_index);
    Log(Record(a, event.type == EventType::kTenantWeight
                      ? world_.SetTenantWeight(event.tenant, event.weight)
                      : world_.SetPriorityWeights(omega)));
  });
}

double ScenarioDriver::OutsideRate() const { return share_ * caps_.requests_per_s; }

void ScenarioDriver::RestartOutside() {
  ++outside_generation_;
  outside_timer_.cancel();
  if (!(OutsideRate() > 0) || engine_.stopped()) return;
  outside_body_ = std::make_shared<const std::string>(nlohmann::json{
      {"model", model_},
      {"messages", {{{"role", "user"}, {"content", TextOfTokens(outside_prompt_)}}}},
      {"max_tokens", outside_max_tokens_},
      {"user", "outside"}}.dump());
  outside_interval_us_ = 1e6 / (OutsideRate() * scale_.speedup());
  outside_next_us_ = static_cast<double>(engine_.NowUs());
  ArmOutside(outside_generation_);
}

void ScenarioDriver::ArmOutside(uint64_t generation) {
  const int64_t wait = static_cast<int64_t>(outside_next_us_) - engine_.NowUs();
  outside_timer_.expires_after(std::chrono::microseconds(std::max<int64_t>(wait, 0)));
  outside_timer_.async_wait([this, generation](boost::system::error_code ec) {
    if (ec || engine_.stopped() || generation != outside_generation_) return;
    SendOutside();
    outside_next_us_ += outside_interval_us_;
    ArmOutside(generation);
  });
}

void ScenarioDriver::SendOutside() {
  const int64_t send = engine_.NowUs();
  world_.SendOutsideCall(outside_body_, [this, send](const HttpResponse& r) {
    if (engine_.stopped()) return;
    AttemptRecord rec;
    rec.activity_id = -1;
    rec.tenant_index = -1;
    rec.send_us = send;
    rec.done_us = engine_.NowUs();
    rec.status = r.status;
    auto doc = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (r.status == 429 && doc.is_object() && doc.contains("error") && doc["error"].is_object() &&
        doc["error"].contains("type") && doc["error"]["type"].is_string()) {
      rec.bound = doc["error"]["type"].get<std::string>();
    }
    // Its use of the token dimension: the usage the upstream reported
    // (OpenAI prompt/completion, Anthropic input/output tokens).
    if (r.status == 200 && doc.is_object() && doc.contains("usage") && doc["usage"].is_object()) {
      const auto& u = doc["usage"];
      rec.tokens = u.value("prompt_tokens", u.value("input_tokens", int64_t{0})) +
                   u.value("completion_tokens", u.value("output_tokens", int64_t{0}));
    }
    engine_.RecordOutsideAttempt(std::move(rec));
  });
}

void ScenarioDriver::Outage(const ScheduledAction& a) {
  ScenarioStep step = world_.StopStore(Event(a.event_index).mode);
  if (step.applied) outage_event_ = a.event_index;
  Log(Record(a, step));
}

void ScenarioDriver::Restore(int event_index, int64_t due_us) {
  outage_event_ = -1;
  const ScheduledAction a{due_us, event_index, 1};
  Log(Record(a, world_.RestoreStore(Event(event_index).mode)));
}

void ScenarioDriver::Submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void ScenarioDriver::WorkerLoop() {
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

}  // namespace bp::loadgen::internal
