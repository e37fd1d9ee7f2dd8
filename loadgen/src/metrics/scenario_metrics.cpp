// Scenario metrics (scenario_metrics.h): the state in force over time, window
// counts from sorted event times, the time series and the per-event figures.
#include "bp/loadgen/scenario_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "bp/loadgen/metrics.h"
#include "metrics_internal.h"

namespace bp::loadgen {
namespace {

using Times = std::vector<int64_t>;  // sorted real us

int64_t CountIn(const Times& t, int64_t from, int64_t to) {
  return std::lower_bound(t.begin(), t.end(), to) - std::lower_bound(t.begin(), t.end(), from);
}

// When tenant t is active: [from_us, to_us). A join or leave event bounds it
// at the event's own time (EventRecord::at_us, the clock the windows are cut
// by), so the leaving tenant is in the window that ends at its leave event
// and a joining one in none that ends at its join; otherwise the tenant is
// active from the start until it finished. A tenant without work, or whose
// join event never ran, is never active (from == to).
struct Span {
  int64_t from_us = 0, to_us = std::numeric_limits<int64_t>::max();
  bool Covers(int64_t a, int64_t b) const { return from_us <= a && to_us >= b; }
  bool Overlaps(int64_t a, int64_t b) const { return from_us < b && to_us > a && from_us < to_us; }
};

std::vector<Span> ActiveSpans(const RunRecords& r, const std::vector<ScenarioEvent>& events) {
  std::vector<Span> spans(r.tenants.size());
  for (size_t t = 0; t < r.tenants.size(); ++t) {
    if (r.tenants[t].finish_us >= 0) spans[t].to_us = r.tenants[t].finish_us;
    if (r.tenants[t].total_activities <= 0) spans[t].to_us = 0;
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const ScenarioEvent& ev = events[i];
    if ((ev.type != EventType::kJoin && ev.type != EventType::kLeave) || ev.tenant_index < 0 ||
        static_cast<size_t>(ev.tenant_index) >= spans.size()) {
      continue;
    }
    const auto t = static_cast<size_t>(ev.tenant_index);
    int64_t at = -1;
    for (const EventRecord& e : r.events) {
      if (e.event_index == static_cast<int>(i) && e.phase == 0) at = e.at_us;
    }
    if (ev.type == EventType::kJoin) {
      spans[t].from_us = at >= 0 ? at : std::numeric_limits<int64_t>::max();
    } else if (at >= 0) {
      spans[t].to_us = at;  // its cancelled calls completing later are no activity
    }
  }
  for (size_t t = 0; t < spans.size(); ++t) {  // never active: an empty span
    if (spans[t].to_us < spans[t].from_us) spans[t].to_us = spans[t].from_us;
  }
  return spans;
}

// Every time the windows count, sorted once.
struct Index {
  std::vector<Times> ok;  // per tenant
  Times responses, throttled, fail_opens, admits, defers;
  Times outside_responses, outside_ok, outside_throttled;
  std::vector<double> tokens_per_call;  // per tenant
  std::vector<Span> spans;              // per tenant: when it is active
  TimeScale scale;

  Index(const RunRecords& r, const std::vector<ScenarioEvent>& events)
      : ok(r.tenants.size()), tokens_per_call(r.tenants.size()), spans(ActiveSpans(r, events)) {
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
    // An unservable tenant that got nothing is in no window, as in the
    // whole-run metrics: it has no share to achieve.
    for (size_t t = 0; t < n; ++t) {
      if (r.tenants[t].unservable && oks[t] == 0) spans[t] = Span{0, 0};
    }
  }
  double Seconds(int64_t us) const { return scale.RealUsToPaperS(static_cast<double>(us)); }
};

// Caps and queue weights in force at `at_us`.
struct InForce {
  double requests_per_s = 0, tokens_per_s = 0;
  std::vector<double> weight, omega;  // w_t and omega_k per tenant
};

InForce StateAt(const RunRecords& r, const std::vector<ScenarioEvent>& events, int64_t at_us) {
  UpstreamCaps caps{r.cap_requests_per_s, r.cap_tokens_per_s};
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
    if (ev.type == EventType::kTenantWeight && ev.tenant_index >= 0 &&
        static_cast<size_t>(ev.tenant_index) < w.size()) {
      w[static_cast<size_t>(ev.tenant_index)] = ev.weight;
    }
    if (ev.type == EventType::kClassOmega) omega[ev.priority] = ev.omega;
  }
  InForce s;
  s.requests_per_s = caps.requests_per_s;
  s.tokens_per_s = caps.tokens_per_s;
  for (size_t t = 0; t < r.tenants.size(); ++t) {
    s.weight.push_back(w[t]);
    s.omega.push_back(omega[r.tenants[t].priority]);
  }
  return s;
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
  int64_t ok_all = 0;
  for (size_t t = 0; t < r.tenants.size(); ++t) {
    const int64_t ok = CountIn(ix.ok[t], from, to);
    ok_all += ok;
    if (!ix.spans[t].Overlaps(from, to)) continue;
    m.tenants.push_back(static_cast<int>(t));
    m.tenant_ok_rps.push_back(len_s > 0 ? static_cast<double>(ok) / len_s : 0);
  }
  m.ok_rps = len_s > 0 ? static_cast<double>(ok_all) / len_s : 0;
  m.tenant_ideal_rps.assign(m.tenants.size(), 0);
  if (to > from) {
    // Ideal shares piecewise: the window cut where a tenant starts or stops
    // being active or an event takes effect; each piece's shares weighted by
    // its length (at most kPieces equal pieces when there are more cuts).
    constexpr size_t kPieces = 64;
    std::vector<int64_t> cuts = {from, to};
    for (size_t i = 0; i < m.tenants.size(); ++i) {
      const Span& sp = ix.spans[static_cast<size_t>(m.tenants[i])];
      for (int64_t c : {sp.from_us, sp.to_us}) {
        if (c > from && c < to) cuts.push_back(c);
      }
    }
    for (const EventRecord& e : r.events) {
      if (e.at_us > from && e.at_us < to) cuts.push_back(e.at_us);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    if (cuts.size() > kPieces + 1) {
      cuts.clear();
      for (size_t k = 0; k <= kPieces; ++k) {
        cuts.push_back(from + static_cast<int64_t>(static_cast<double>(to - from) * k / kPieces));
      }
    }
    int64_t longest = 0;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      const int64_t a = cuts[k], b = cuts[k + 1];
      if (b <= a) continue;
      const double weight = static_cast<double>(b - a) / static_cast<double>(to - from);
      const int64_t mid = a + (b - a) / 2;
      const InForce s = StateAt(r, events, a);
      const internal::CapacityLeft left = internal::CapacityLeftOf(
          r, s.requests_per_s, s.tokens_per_s, from, to);  // outside use: the whole window's
      std::vector<double> caps = {left.requests_per_s};
      if (s.tokens_per_s > 0) caps.push_back(left.tokens_per_s);
      std::vector<FairShareQueue> queues;
      std::vector<size_t> member;  // index into m.tenants
      for (size_t i = 0; i < m.tenants.size(); ++i) {
        const auto t = static_cast<size_t>(m.tenants[i]);
        if (!ix.spans[t].Covers(mid, mid + 1)) continue;
        FairShareQueue q = internal::ShareQueue(r, t, s.weight[t], s.omega[t]);
        q.cost = {1.0};
        if (caps.size() > 1) q.cost.push_back(ix.tokens_per_call[t]);
        queues.push_back(q);
        member.push_back(i);
      }
      const FairShares shares = WeightedDrfShares(caps, queues);
      double sum = 0;
      std::map<int, int> frozen_by;  // dimension -> queues it froze
      for (size_t j = 0; j < member.size(); ++j) {
        m.tenant_ideal_rps[member[j]] += weight * shares.rate[j];
        sum += shares.rate[j];
        ++frozen_by[shares.binding[j]];
      }
      m.capacity_requests_per_s += weight * left.requests_per_s;
      m.capacity_tokens_per_s += weight * left.tokens_per_s;
      m.capacity_rps += weight * sum;
      m.outside_requests_per_s = left.outside_requests_per_s;
      m.outside_tokens_per_s = left.outside_tokens_per_s;
      if (b - a > longest && !frozen_by.empty()) {
        longest = b - a;
        // The binding dimension: the one that froze the most queues.
        auto most = std::max_element(frozen_by.begin(), frozen_by.end(),
                                     [](auto x, auto y) { return x.second < y.second; });
        m.binding = most->first == 0 ? "requests" : most->first == 1 ? "tokens" : "demand";
      }
    }
  }
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
  return Window(r, events, Index(r, events), from_us, to_us);
}

double TimeToFairShare(const RunRecords& r, const std::vector<ScenarioEvent>& events,
                       const std::vector<int>& tracked, int64_t from_us, int64_t limit_us) {
  return TimeToShare(r, events, Index(r, events), tracked, from_us, limit_us);
}

ScenarioMetrics ComputeScenarioMetrics(const RunRecords& r,
                                       const std::vector<ScenarioEvent>& events, double bucket_s) {
  const Index ix(r, events);
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
        if (tracked && ix.spans[t].Covers(at, at + one_s))
          em.tracked.push_back(static_cast<int>(t));
      }
      em.time_to_share_s =
          TimeToShare(r, events, ix, em.tracked, at, std::min(at + settle_us + window_us, end));
    }
    m.events.push_back(std::move(em));
  }
  return m;
}

}  // namespace bp::loadgen
