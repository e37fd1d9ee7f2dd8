// Where a class's time goes: durable timers per cause and 429 retry waits
// (metrics.h, ClassMetrics).
#include <algorithm>
#include <map>
#include <vector>

#include "metrics_internal.h"

namespace bp::loadgen::internal {

void AddWaitBreakdown(const RunRecords& r, RunMetrics& m) {
  const TimeScale scale = TimeScale::Recorded(m.speedup);
  const int n_tenants = static_cast<int>(r.tenants.size());
  std::map<int, ClassMetrics*> by_priority;
  for (ClassMetrics& c : m.classes) by_priority[c.priority] = &c;
  auto class_of = [&](int tenant) -> ClassMetrics* {
    if (tenant < 0 || tenant >= n_tenants) return nullptr;
    auto it = by_priority.find(r.tenants[static_cast<size_t>(tenant)].priority);
    return it == by_priority.end() ? nullptr : it->second;
  };
  // Activities by id (the engine's ids are their indices; hand-made sets may differ).
  std::map<int64_t, const ActivityRecord*> by_id;
  for (const ActivityRecord& a : r.activities) by_id[a.id] = &a;
  auto activity = [&](int64_t id) -> const ActivityRecord* {
    auto it = by_id.find(id);
    return it == by_id.end() ? nullptr : it->second;
  };
  // The tail: OK activities at or above their class's end-to-end p95, the
  // same samples (scheduled -> completed) the p95 is taken from.
  auto in_tail = [&](const ActivityRecord& a, const ClassMetrics& c) {
    if (!a.ok || a.completed_us < 0 || a.completed_us < a.scheduled_us) return false;
    return c.end_to_end.count > 0 &&
           scale.RealUsToPaperMs(static_cast<double>(a.completed_us - a.scheduled_us)) >=
               c.end_to_end.p95_ms;
  };

  for (const ActivityRecord& a : r.activities) {
    ClassMetrics* c = class_of(a.tenant_index);
    if (c && in_tail(a, *c)) ++c->tail_activities;
  }
  for (const DeferralRecord& d : r.deferrals) {
    ClassMetrics* c = class_of(d.tenant_index);
    if (!c) continue;
    const double ms = scale.RealUsToPaperMs(static_cast<double>(d.delay_us));
    WaitTotal& w = c->deferrals_by_cause[d.cause];
    ++w.count;
    w.total_ms += ms;
    const ActivityRecord* a = activity(d.activity_id);
    if (a && in_tail(*a, *c)) {
      WaitTotal& t = c->tail_deferrals_by_cause[d.cause];
      ++t.count;
      t.total_ms += ms;
    }
  }
  // Attempts of one activity in send order; a 429 (not proxy-local) followed
  // by another attempt counts its answer -> next send.
  std::map<int64_t, std::vector<const AttemptRecord*>> per_activity;
  for (const AttemptRecord& at : r.attempts) per_activity[at.activity_id].push_back(&at);
  for (auto& [id, attempts] : per_activity) {
    std::stable_sort(
        attempts.begin(), attempts.end(),
        [](const AttemptRecord* x, const AttemptRecord* y) { return x->send_us < y->send_us; });
    for (size_t i = 0; i + 1 < attempts.size(); ++i) {
      const AttemptRecord& at = *attempts[i];
      if (at.status != 429 || at.proxy_local) continue;
      ClassMetrics* c = class_of(at.tenant_index);
      if (!c) continue;
      ++c->retries_429.count;
      c->retries_429.total_ms += scale.RealUsToPaperMs(
          static_cast<double>(std::max<int64_t>(0, attempts[i + 1]->send_us - at.done_us)));
    }
  }
}

}  // namespace bp::loadgen::internal
