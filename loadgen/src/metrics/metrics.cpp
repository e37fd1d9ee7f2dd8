// ComputeRunMetrics: SPEC section 6 from one run's RunRecords. Each metric's
// exact definition is in metrics.h and the docs/metrics.md; the
// heatmap lives in metrics_heatmap.cpp, the flat list in metrics_scalar.cpp.
#include "bp/loadgen/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "bp/gate.h"
#include "metrics_internal.h"

namespace bp::loadgen {
namespace internal {

LatencySummary Summarize(const std::vector<double>& ms) {
  LatencySummary s;
  s.count = static_cast<int64_t>(ms.size());
  if (ms.empty()) return s;
  double sum = 0;
  for (double v : ms) sum += v;
  s.mean_ms = sum / static_cast<double>(ms.size());
  s.p50_ms = Percentile(ms, 0.50);
  s.p95_ms = Percentile(ms, 0.95);
  s.p99_ms = Percentile(ms, 0.99);
  return s;
}

}  // namespace internal
namespace {

using internal::Summarize;

void CountAttempts(const RunRecords& r, RunMetrics& m) {
  for (const AttemptRecord& a : r.attempts) {
    if (a.proxy_local) {
      if (a.status == 429) ++m.proxy_local_429;
      continue;
    }
    if (a.status == 0) {
      ++m.connection_errors;
      continue;
    }
    ++m.upstream_responses;
    if (a.status != 429) continue;
    ++m.upstream_429;
    if (a.bound.find("token") != std::string::npos) {  // tokens, input_tokens, ...
      ++m.upstream_429_tokens_bound;
    } else if (a.bound.find("request") != std::string::npos) {
      ++m.upstream_429_requests_bound;
    } else {
      ++m.upstream_429_other_bound;
    }
  }
  if (m.upstream_responses > 0) {
    m.share_429 = static_cast<double>(m.upstream_429) / static_cast<double>(m.upstream_responses);
  }
  const int64_t all = m.upstream_responses + m.proxy_local_429;
  if (all > 0)
    m.proxy_local_429_share = static_cast<double>(m.proxy_local_429) / static_cast<double>(all);
}

// Per-activity samples grouped by priority class.
struct ClassSamples {
  std::vector<double> http_ms, e2e_ms, in_activity_ms, workflow_ms, workflow_end_ms;
  double slot_us = 0;
  int64_t ok_calls = 0;
};

}  // namespace

RunMetrics ComputeRunMetrics(const RunRecords& r, const MetricsOptions& options) {
  RunMetrics m;
  m.workload = r.workload;
  m.configuration = r.configuration;
  m.repeat = r.repeat;
  const TimeScale scale = TimeScale::Recorded(r.speedup);
  m.speedup = scale.speedup();
  m.cap_requests_per_s = r.cap_requests_per_s;
  m.cap_tokens_per_s = r.cap_tokens_per_s;
  m.gate_fail_opens = r.gate_fail_opens;
  for (auto [cause, n] : {std::pair{FailOpenCause::kUnreachable, r.gate_fail_opens_unreachable},
                          std::pair{FailOpenCause::kTimedOut, r.gate_fail_opens_timed_out},
                          std::pair{FailOpenCause::kNotConfigured, r.gate_fail_opens_unconfigured},
                          std::pair{FailOpenCause::kServerError, r.gate_fail_opens_server_error}}) {
    if (n > 0) m.gate_fail_opens_by_cause[FailOpenCauseName(cause)] = n;
  }
  m.gate_reseeds = r.gate_reseeds;
  m.gate_breaker_opens = r.gate_breaker_opens;
  m.gate_release_errors = r.gate_release_errors;
  m.gate_unreleased = r.gate_unreleased;
  m.gate_server = r.gate_server;
  {
    std::vector<double> admit_ms;
    for (const GateDecisionRecord& d : r.gate_decisions) {
      if (d.latency_us >= 0) admit_ms.push_back(static_cast<double>(d.latency_us) / 1000.0);
    }
    m.gate_admit_real = Summarize(admit_ms);
  }
  const int n_tenants = static_cast<int>(r.tenants.size());
  auto valid = [&](int t) { return t >= 0 && t < n_tenants; };

  // Run span and contention window.
  const int64_t drain_end_us = internal::LastCompletionUs(r);
  const int64_t window_end_us = internal::ContentionWindowEndUs(r);
  m.contention_window_s = scale.RealUsToPaperS(window_end_us);
  m.drain_span_s = scale.RealUsToPaperS(drain_end_us);

  CountAttempts(r, m);
  const internal::CapacityLeft left =
      internal::CapacityLeftOf(r, r.cap_requests_per_s, r.cap_tokens_per_s, 0, window_end_us);
  m.outside_requests_per_s = left.outside_requests_per_s;
  m.outside_tokens_per_s = left.outside_tokens_per_s;
  m.capacity_left_requests_per_s = left.requests_per_s;
  m.capacity_left_tokens_per_s = left.tokens_per_s;

  // Per tenant: OK calls, tokens, dominant-share service in the window.
  m.tenants.resize(r.tenants.size());
  std::vector<double> tokens_sum(r.tenants.size(), 0.0), prompt_sum(r.tenants.size(), 0.0);
  std::vector<int64_t> activity_count(r.tenants.size(), 0);
  std::vector<int64_t> cancelled_count(r.tenants.size(), 0);
  std::vector<double> dominant_sum(r.tenants.size(), 0.0);
  std::map<int, ClassSamples> classes;
  for (int t = 0; t < n_tenants; ++t) classes[r.tenants[t].priority];

  for (const ActivityRecord& a : r.activities) {
    ++m.activities;
    m.deferrals += a.deferrals;
    if (!valid(a.tenant_index)) continue;
    const auto t = static_cast<size_t>(a.tenant_index);
    ClassSamples& cls = classes[r.tenants[t].priority];
    ++activity_count[t];
    prompt_sum[t] += static_cast<double>(a.prompt_tokens);
    if (r.slots_held.empty()) cls.slot_us += static_cast<double>(a.slot_held_us);
    TenantMetrics& tm = m.tenants[t];
    if (a.cancelled) {  // its tenant left (scenario): neither OK nor failed
      ++m.cancelled_calls;
      ++cancelled_count[t];
      continue;
    }
    if (!a.ok) {
      if (a.completed_us >= 0) {  // failed for good (else: not finished)
        const std::string cause = a.fail_cause.empty() ? "failed" : a.fail_cause;
        ++m.failed_calls;
        ++tm.failed_calls;
        ++tm.failed_by_cause[cause];
        ++m.failed_by_cause[cause];
      }
      continue;
    }
    ++m.ok_calls;
    ++cls.ok_calls;
    ++tm.ok_calls;
    const double tokens = static_cast<double>(a.prompt_tokens + a.completion_tokens);
    tokens_sum[t] += tokens;
    const int64_t ok_us = internal::OkTimeUs(a);
    if (ok_us >= 0) {
      const double wait_s = scale.RealUsToPaperS(
          static_cast<double>(ok_us - std::max<int64_t>(r.tenants[t].start_us, 0)));
      if (tm.first_ok_wait_s < 0 || wait_s < tm.first_ok_wait_s) tm.first_ok_wait_s = wait_s;
    }
    if (ok_us >= 0 && ok_us < window_end_us) {
      ++tm.ok_calls_window;
      dominant_sum[t] += internal::DominantCost(left.requests_per_s, left.tokens_per_s, tokens);
    }
    if (a.first_send_us >= 0 && a.final_answer_us >= a.first_send_us) {
      cls.http_ms.push_back(scale.RealUsToPaperMs(a.final_answer_us - a.first_send_us));
    }
    if (a.completed_us >= a.scheduled_us && a.completed_us >= 0) {
      cls.e2e_ms.push_back(scale.RealUsToPaperMs(a.completed_us - a.scheduled_us));
    }
    cls.in_activity_ms.push_back(scale.RealUsToPaperMs(a.in_activity_us));
  }
  for (const SlotInterval& s : r.slots_held) {
    if (!valid(s.tenant_index)) continue;
    const int64_t release = s.release_us >= s.acquire_us ? s.release_us : drain_end_us;
    classes[r.tenants[static_cast<size_t>(s.tenant_index)].priority].slot_us +=
        static_cast<double>(std::max<int64_t>(0, release - s.acquire_us));
  }
  for (const WorkflowRecord& w : r.workflows) {
    if (!valid(w.tenant_index) || w.end_us < w.start_us) continue;
    auto& cls = classes[r.tenants[static_cast<size_t>(w.tenant_index)].priority];
    cls.workflow_ms.push_back(scale.RealUsToPaperMs(w.end_us - w.start_us));
    cls.workflow_end_ms.push_back(scale.RealUsToPaperMs(w.end_us));  // t = 0: run start
  }

  // Ideal shares over the queues that have work (WFQ or weighted DRF).
  std::vector<double> caps;
  if (r.cap_requests_per_s > 0) caps.push_back(left.requests_per_s);
  if (r.cap_tokens_per_s > 0) caps.push_back(left.tokens_per_s);
  std::vector<FairShareQueue> queues;
  std::vector<size_t> queue_tenant;
  for (size_t t = 0; t < r.tenants.size(); ++t) {
    const TenantInfo& info = r.tenants[t];
    TenantMetrics& tm = m.tenants[t];
    tm.id = info.id;
    tm.priority = info.priority;
    tm.weight = info.weight * info.priority_weight;
    tm.finish_s = info.finish_us >= 0 ? scale.RealUsToPaperS(info.finish_us) : -1.0;
    const int64_t done = tm.ok_calls + tm.failed_calls;
    tm.unfinished = std::max<int64_t>(0, activity_count[t] - cancelled_count[t] - done);
    tm.not_started = std::max<int64_t>(0, info.total_activities - activity_count[t]);
    m.unfinished_activities += tm.unfinished;
    m.not_started_activities += tm.not_started;
    // Demand: work it had and did not cancel. A tenant that left (scenario)
    // before any of its calls got a slot, e.g. at 0 s, never demanded
    // anything: it is no queue of the shares and Jain's index (where its
    // achievement 0 dragged the whole run down) and was not starved.
    const bool demanded =
        std::max(info.total_activities, activity_count[t]) - cancelled_count[t] > 0;
    // A tenant none of whose calls can ever be served is reported apart: it
    // has no share to achieve, so it is in neither Jain index.
    tm.unservable = demanded && info.unservable && tm.ok_calls == 0;
    if (tm.unservable) {
      ++m.tenants_unservable;
    } else if (demanded) {
      if (tm.first_ok_wait_s < 0) {
        ++m.tenants_never_served;
      } else {
        m.max_first_ok_wait_s = std::max(m.max_first_ok_wait_s, tm.first_ok_wait_s);
      }
    }
    if (tm.ok_calls > 0) {
      tm.tokens_per_call = tokens_sum[t] / static_cast<double>(tm.ok_calls);
    } else if (activity_count[t] > 0) {
      tm.tokens_per_call = prompt_sum[t] / static_cast<double>(activity_count[t]);
    }
    if (m.contention_window_s > 0) {
      tm.ok_rps = static_cast<double>(tm.ok_calls_window) / m.contention_window_s;
      tm.dominant_share = dominant_sum[t] / m.contention_window_s;
    }
    if (!demanded || tm.unservable) continue;
    FairShareQueue q = internal::ShareQueue(r, t, info.weight, info.priority_weight);
    if (t < options.tenant_demand_cap_rps.size() && options.tenant_demand_cap_rps[t] > 0) {
      q.demand_cap = options.tenant_demand_cap_rps[t];
    }
    if (r.cap_requests_per_s > 0) q.cost.push_back(1.0);
    if (r.cap_tokens_per_s > 0) q.cost.push_back(tm.tokens_per_call);
    queues.push_back(std::move(q));
    queue_tenant.push_back(t);
  }
  std::vector<double> achievement, drf_achievement;
  if (!caps.empty()) {
    const FairShares shares = WeightedDrfShares(caps, queues);
    for (size_t i = 0; i < queues.size(); ++i) {
      TenantMetrics& tm = m.tenants[queue_tenant[i]];
      tm.ideal_rps = shares.rate[i];
      tm.ideal_dominant_share = shares.dominant_share[i];
      if (tm.ideal_rps > 0) tm.achievement = tm.ok_rps / tm.ideal_rps;
      if (tm.ideal_dominant_share > 0)
        tm.drf_achievement = tm.dominant_share / tm.ideal_dominant_share;
      achievement.push_back(tm.achievement);
      drf_achievement.push_back(tm.drf_achievement);
    }
  }
  m.achievement_jain = JainIndex(achievement);
  m.drf_jain = JainIndex(drf_achievement);

  // Per class, then totals.
  std::vector<double> all_http, all_e2e, all_in_activity;
  double all_slot_us = 0;
  for (auto& [priority, cls] : classes) {
    ClassMetrics c;
    c.priority = priority;
    for (const TenantMetrics& tm : m.tenants) {
      if (tm.priority != priority) continue;
      c.ok_rps += tm.ok_rps;
      c.ideal_rps += tm.ideal_rps;
    }
    c.http = Summarize(cls.http_ms);
    c.end_to_end = Summarize(cls.e2e_ms);
    c.workflow = Summarize(cls.workflow_ms);
    if (!cls.workflow_end_ms.empty()) {
      c.workflow_end_mean_s = Summarize(cls.workflow_end_ms).mean_ms / 1e3;
    }
    c.in_activity_ms = Summarize(cls.in_activity_ms).mean_ms;
    if (cls.ok_calls > 0)
      c.slot_ms_per_ok_call =
          scale.RealUsToPaperMs(cls.slot_us) / static_cast<double>(cls.ok_calls);
    all_http.insert(all_http.end(), cls.http_ms.begin(), cls.http_ms.end());
    all_e2e.insert(all_e2e.end(), cls.e2e_ms.begin(), cls.e2e_ms.end());
    all_in_activity.insert(all_in_activity.end(), cls.in_activity_ms.begin(),
                           cls.in_activity_ms.end());
    all_slot_us += cls.slot_us;
    m.ok_rps_window += c.ok_rps;
    m.classes.push_back(std::move(c));
  }
  m.http = Summarize(all_http);
  m.end_to_end = Summarize(all_e2e);
  m.in_activity_ms = Summarize(all_in_activity).mean_ms;
  if (m.ok_calls > 0)
    m.slot_ms_per_ok_call = scale.RealUsToPaperMs(all_slot_us) / static_cast<double>(m.ok_calls);
  if (m.drain_span_s > 0) m.mean_ok_rps = static_cast<double>(m.ok_calls) / m.drain_span_s;
  if (!r.gate_decisions.empty() && m.ok_calls > 0) {
    m.admit_calls_per_ok_call =
        static_cast<double>(r.gate_decisions.size()) / static_cast<double>(m.ok_calls);
  }
  int64_t gate_admits = 0;
  for (const GateDecisionRecord& d : r.gate_decisions)
    gate_admits += d.verdict == GateVerdict::kAdmit;
  if (gate_admits > 0) {
    m.admitted_ahead_share =
        static_cast<double>(r.gate_admits_ahead) / static_cast<double>(gate_admits);
  }
  if (r.gate_admits_ahead > 0) {
    m.mean_start_in_ms = scale.RealUsToPaperMs(static_cast<double>(r.gate_start_in_us)) /
                         static_cast<double>(r.gate_admits_ahead);
  }
  m.vtc = ComputeVtcMeasure(r);

  internal::AddWaitBreakdown(r, m);
  internal::AddStreamMetrics(r, m);
  m.heatmap = internal::BuildHeatmap(r, options, drain_end_us);
  return m;
}

}  // namespace bp::loadgen
