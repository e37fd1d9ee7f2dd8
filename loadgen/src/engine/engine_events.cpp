// Scenario events in the engine (scenario.h, engine.h): the driver
// (scenario_driver.h) runs them; the engine gives it its tenants, clock and
// records through ScenarioEngine, and the live world through
// LiveScenarioWorld. An outage still active at the end is restored before
// Run returns, so a run never leaves the store paused or stopped.
#include <algorithm>

#include "bp/loadgen/engine.h"
#include "scenario_driver.h"

namespace bp::loadgen {

struct Engine::ScenarioRun final : internal::ScenarioEngine {
  explicit ScenarioRun(Engine& engine)
      : e(engine),
        world(*engine.http_, engine.options_, engine.workload_.gate_mode),
        driver(engine.workload_, engine.options_.scale, engine.io_, *this, world,
               engine.options_.label, engine.options_.model) {}

  int64_t NowUs() const override { return e.NowUs(); }
  void AfterRealUs(int64_t real_us, std::function<void()> fn) override {
    e.AfterRealUs(real_us, std::move(fn));
  }
  bool stopped() const override { return e.stopped_; }
  void JoinTenant(int tenant_index) override { e.JoinTenant(tenant_index); }
  void LeaveTenant(int tenant_index) override { e.LeaveTenant(tenant_index); }
  void RecordOutsideAttempt(AttemptRecord attempt) override {
    e.records_.outside_attempts.push_back(std::move(attempt));
  }

  Engine& e;
  internal::LiveScenarioWorld world;
  internal::ScenarioDriver driver;
};

void Engine::ScenarioRunDelete::operator()(ScenarioRun* run) const { delete run; }

void Engine::StartScenario() {
  if (workload_.events.empty()) return;
  scenario_.reset(new ScenarioRun(*this));
  scenario_->driver.Start();
}

void Engine::FinishScenario() {
  if (!scenario_) return;
  for (EventRecord& r : scenario_->driver.Finish()) records_.events.push_back(std::move(r));
  std::stable_sort(records_.events.begin(), records_.events.end(),
                   [](const EventRecord& a, const EventRecord& b) { return a.at_us < b.at_us; });
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
