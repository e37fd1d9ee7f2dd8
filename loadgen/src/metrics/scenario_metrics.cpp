// Scenario metrics (scenario_metrics.h): the state in force over time, window
// counts from sorted event times, the time series and the per-event figures.
#include "bp/loadgen/scenario_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "bp/loadgen/metrics.h"
#include "metrics_internal.h"

namespace bp::loadgen {
namespace {

using Times = std::vector<int64_t>;  // sorted real us

int64_t CountIn(const Times& t, int64_t from, int64_t to) {
  return std::lower_bound(t.begin(), t.end(), to) - std::lower_bound(t.begin(), t.end(), from);
}

// Every time the windows count, sorted once.
struct Index {
  std::vector<Times> ok;  // per tenant
  Times responses, throttled, fail_opens, admits, defers;
  Times outside_responses, outside_ok, outside_throttled;
  std::vector<double> tokens_per_call;  // per tenant
  TimeScale scale;

  explicit Index(const RunRecords& r) : ok(r.tenants.size()), tokens_per_call(r.tenants.size()) {
    scale = TimeScale::Recorded(r.speedup);
    const size_t n = r.tenants.size();
    std::vector<double> tok(n, 0), prompt(n, 0);
    std::vector<int64_t> oks(n, 0), all(n, 0);
    for (const ActivityRecord& a : r.activities) {
      if (a.tenant_index < 0 || static_cast<size_t>(a.tenant_index) >= n) continue;
      const auto t = static_cast<size_t>(a.tenant_index);
      ++all[t];
      prompt[t] += static_cast<double>(a.prompt_tokens);
      if (!a.ok) continue;
      ++oks[t];
      tok[t] += static_cast<double>(a.prompt_tokens + a.completion_tokens);
      if (internal::OkTimeUs(a) >= 0) ok[t].push_back(internal::OkTimeUs(a));
    }
    for (size_t t = 0; t < n; ++t) {
      tokens_per_call[t] = oks[t] > 0 ? tok[t] / static_cast<double>(oks[t])
                                      : (all[t] > 0 ? prompt[t] / static_cast<double>(all[t]) : 0);
    }
    for (const AttemptRecord& a : r.attempts) {
      if (a.proxy_local || a.status == 0) continue;
      responses.push_back(a.done_us);
      if (a.status == 429) throttled.push_back(a.done_us);
    }
    for (const AttemptRecord& a : r.outside_attempts) {
      if (a.status == 0) continue;
      outside_responses.push_back(a.done_us);
      if (a.status == 200) outside_ok.push_back(a.done_us);
      if (a.status == 429) outside_throttled.push_back(a.done_us);
    }
    for (const GateDecisionRecord& d : r.gate_decisions) {
      if (d.verdict == GateVerdict::kFailOpen) fail_opens.push_back(d.at_us);
      if (d.verdict == GateVerdict::kAdmit) admits.push_back(d.at_us);
      if (d.verdict == GateVerdict::kDefer) defers.push_back(d.at_us);
    }
    for (Times* t : {&responses, &throttled, &fail_opens, &admits, &defers, &outside_responses,
                     &outside_ok, &outside_throttled}) {
      std::sort(t->begin(), t->end());
    }
    for (Times& t : ok) std::sort(t.begin(), t.end());
  }
  double Seconds(int64_t us) const { return scale.RealUsToPaperS(static_cast<double>(us)); }
};

// Caps (after the outside share) and queue weights in force at `at_us`.
struct InForce {
  double requests_per_s = 0, tokens_per_s = 0;
  std::vector<double> weight, omega;  // w_t and omega_k per tenant
};

InForce StateAt(const RunRecords& r, const std::vector<ScenarioEvent>& events, int64_t at_us) {
  UpstreamCaps caps{r.cap_requests_per_s, r.cap_tokens_per_s};
  double share = 0;
  std::vector<double> w;
  std::map<int, double> omega;
  for (const TenantInfo& t : r.tenants) {
    w.push_back(t.weight);
    omega[t.priority] = t.priority_weight;
  }
  for (const EventRecord& e : r.events) {  // in the order they ran
    if (e.phase != 0 || e.at_us > at_us || e.event_index < 0 ||
        static_cast<size_t>(e.event_index) >= events.size()) {
      continue;
    }
    const ScenarioEvent& ev = events[static_cast<size_t>(e.event_index)];
    if (ev.type == EventType::kUpstreamLimits && e.applied) caps = ev.caps;
    if (ev.type == EventType::kOutsideTraffic && e.applied) share = ev.share;
    if (ev.type == EventType::kTenantWeight && ev.tenant_index >= 0 &&
        static_cast<size_t>(ev.tenant_index) < w.size()) {
      w[static_cast<size_t>(ev.tenant_index)] = ev.weight;
    }
    if (ev.type == EventType::kClassOmega) omega[ev.priority] = ev.omega;
  }
  InForce s;
  s.requests_per_s = caps.requests_per_s * (1 - share);
  s.tokens_per_s = caps.tokens_per_s * (1 - share);
  for (size_t t = 0; t < r.tenants.size(); ++t) {
    s.weight.push_back(w[t]);
    s.omega.push_back(omega[r.tenants[t].priority]);
  }
  return s;
}

bool Active(const TenantInfo& t, int64_t from, int64_t to) {
  return t.total_activities > 0 && (t.join_us < 0 || t.join_us <= from) &&
         (t.leave_us < 0 || t.leave_us >= to) && (t.finish_us < 0 || t.finish_us >= to);
}

WindowMetrics Window(const RunRecords& r, const std::vector<ScenarioEvent>& events, const Index& ix,
                     int64_t from, int64_t to) {
  WindowMetrics m;
  to = std::max(to, from);
  m.from_s = ix.Seconds(from);
  m.to_s = ix.Seconds(to);
  const double len_s = m.to_s - m.from_s;
  m.responses = CountIn(ix.responses, from, to);
  m.throttled = CountIn(ix.throttled, from, to);
  m.share_429 = m.responses > 0 ? static_cast<double>(m.throttled) / m.responses : 0;
  m.fail_opens = CountIn(ix.fail_opens, from, to);
  m.outside_responses = CountIn(ix.outside_responses, from, to);
  m.outside_ok = CountIn(ix.outside_ok, from, to);
  m.outside_throttled = CountIn(ix.outside_throttled, from, to);
  const InForce s = StateAt(r, events, from);
  m.capacity_requests_per_s = s.requests_per_s;
  std::vector<double> caps = {s.requests_per_s};
  if (s.tokens_per_s > 0) caps.push_back(s.tokens_per_s);
  std::vector<FairShareQueue> queues;
  int64_t ok_all = 0;
  for (size_t t = 0; t < r.tenants.size(); ++t) {
    const int64_t ok = CountIn(ix.ok[t], from, to);
    ok_all += ok;
    if (!Active(r.tenants[t], from, to)) continue;
    m.tenants.push_back(static_cast<int>(t));
    m.tenant_ok_rps.push_back(len_s > 0 ? static_cast<double>(ok) / len_s : 0);
    FairShareQueue q = internal::ShareQueue(r, t, s.weight[t], s.omega[t]);
    q.cost = {1.0};
    if (caps.size() > 1) q.cost.push_back(ix.tokens_per_call[t]);
    queues.push_back(q);
  }
  m.ok_rps = len_s > 0 ? static_cast<double>(ok_all) / len_s : 0;
  m.tenant_ideal_rps = WeightedDrfShares(caps, queues).rate;
  std::vector<double> ratios;
  for (size_t i = 0; i < m.tenants.size(); ++i) {
    if (m.tenant_ideal_rps[i] > 0) ratios.push_back(m.tenant_ok_rps[i] / m.tenant_ideal_rps[i]);
  }
  m.achievement_jain = JainIndex(ratios);
  return m;
}

double TimeToShare(const RunRecords& r, const std::vector<ScenarioEvent>& events, const Index& ix,
                   const std::vector<int>& tracked, int64_t from, int64_t limit) {
  const auto step = static_cast<int64_t>(ix.scale.ToReal(0.25e6));
  const auto len = static_cast<int64_t>(ix.scale.ToReal(1e6));
  for (int64_t a = from; a + len <= limit; a += std::max<int64_t>(step, 1)) {
    WindowMetrics w = Window(r, events, ix, a, a + len);
    bool all = true, any = false;
    for (size_t i = 0; i < w.tenants.size(); ++i) {
      if (std::find(tracked.begin(), tracked.end(), w.tenants[i]) == tracked.end()) continue;
      any = true;
      all = all &&
            std::fabs(w.tenant_ok_rps[i] - w.tenant_ideal_rps[i]) <= 0.1 * w.tenant_ideal_rps[i];
    }
    if (any && all) return ix.Seconds(a + len - from);
  }
  return -1;
}

}  // namespace

WindowMetrics ComputeWindow(const RunRecords& r, const std::vector<ScenarioEvent>& events,
                            int64_t from_us, int64_t to_us) {
  return Window(r, events, Index(r), from_us, to_us);
}

double TimeToFairShare(const RunRecords& r, const std::vector<ScenarioEvent>& events,
                       const std::vector<int>& tracked, int64_t from_us, int64_t limit_us) {
  return TimeToShare(r, events, Index(r), tracked, from_us, limit_us);
}

ScenarioMetrics ComputeScenarioMetrics(const RunRecords& r,
                                       const std::vector<ScenarioEvent>& events, double bucket_s) {
  const Index ix(r);
  ScenarioMetrics m;
  m.gate_fail_opens = r.gate_fail_opens;
  m.outside_responses = static_cast<int64_t>(ix.outside_responses.size());
  m.outside_ok = static_cast<int64_t>(ix.outside_ok.size());
  m.outside_throttled = static_cast<int64_t>(ix.outside_throttled.size());
  for (const WorkflowRecord& w : r.workflows) {
    ++m.workflows_started;
    if (w.end_us >= 0) ++m.workflows_completed;
  }
  for (const ActivityRecord& a : r.activities) m.activities_cancelled += a.cancelled ? 1 : 0;
  const int64_t end = std::max(r.end_us, internal::LastCompletionUs(r));

  // Time series.
  Timeline& tl = m.timeline;
  tl.bucket_s = bucket_s > 0 ? bucket_s : 1.0;
  for (const TenantInfo& t : r.tenants) tl.tenants.push_back(t.id);
  const int64_t bucket_us = std::max<int64_t>(1, std::llround(ix.scale.ToReal(tl.bucket_s * 1e6)));
  for (int64_t a = 0; a < end; a += bucket_us) {
    const int64_t b = std::min(a + bucket_us, end);           // the last bucket may be shorter
    if (b - a < bucket_us / 2 && !tl.buckets.empty()) break;  // too short to be a rate
    const double len_s = ix.Seconds(b - a);
    auto rate = [&](const Times& t) { return static_cast<double>(CountIn(t, a, b)) / len_s; };
    TimelineBucket k;
    k.t_s = ix.Seconds(a);
    for (const Times& t : ix.ok) k.ok_rps.push_back(rate(t));
    k.throttled_per_s = rate(ix.throttled);
    k.responses_per_s = rate(ix.responses);
    k.outside_ok_per_s = rate(ix.outside_ok);
    k.outside_throttled_per_s = rate(ix.outside_throttled);
    k.admits_per_s = rate(ix.admits);
    k.defers_per_s = rate(ix.defers);
    k.fail_opens_per_s = rate(ix.fail_opens);
    tl.buckets.push_back(std::move(k));
  }

  // Per event.
  for (size_t i = 0; i < events.size(); ++i) {
    const ScenarioEvent& ev = events[i];
    EventMetrics em;
    em.event_index = static_cast<int>(i);
    em.type = EventTypeName(ev.type);
    em.text = EventText(ev);
    int64_t at = -1, restore = -1;
    for (const EventRecord& e : r.events) {
      if (e.event_index != em.event_index) continue;
      if (e.phase == 0) {
        at = e.at_us;
        em.applied = e.applied;
        em.detail = e.detail;
      } else {
        restore = e.at_us;
        if (!e.applied) em.detail += "; restore: " + e.detail;
      }
    }
    if (at < 0) {
      em.detail = "did not run (the run ended first)";
      m.events.push_back(std::move(em));
      continue;
    }
    em.at_s = ix.Seconds(at);
    em.restore_s = restore >= 0 ? ix.Seconds(restore) : -1;
    const int64_t window_us = std::llround(ix.scale.ToReal(ev.window_s * 1e6));
    const int64_t settle_us = std::llround(ix.scale.ToReal(ev.settle_s * 1e6));
    const int64_t anchor = ev.type == EventType::kStateOutage && restore >= 0 ? restore : at;
    em.before = Window(r, events, ix, std::max<int64_t>(0, at - window_us), at);
    const int64_t after_from = std::min(anchor + settle_us, end);
    em.after = Window(r, events, ix, after_from, std::min(after_from + window_us, end));
    if (ev.type == EventType::kStateOutage) {
      const int64_t two_s = std::llround(ix.scale.ToReal(2e6));
      em.first_2s = Window(r, events, ix, anchor, std::min(anchor + two_s, end));
      em.during = Window(r, events, ix, at, anchor);
    } else {
      // Tracked tenants: active right after the event.
      const int64_t one_s = std::llround(ix.scale.ToReal(1e6));
      for (size_t t = 0; t < r.tenants.size(); ++t) {
        const TenantInfo& info = r.tenants[t];
        const bool tracked = ev.type == EventType::kJoin || ev.type == EventType::kTenantWeight
                                 ? static_cast<int>(t) == ev.tenant_index
                             : ev.type == EventType::kClassOmega
                                 ? info.priority == ev.priority
                                 : static_cast<int>(t) != ev.tenant_index;
        if (tracked && Active(info, at, at + one_s)) em.tracked.push_back(static_cast<int>(t));
      }
      em.time_to_share_s =
          TimeToShare(r, events, ix, em.tracked, at, std::min(at + settle_us + window_us, end));
    }
    m.events.push_back(std::move(em));
  }
  return m;
}

}  // namespace bp::loadgen
