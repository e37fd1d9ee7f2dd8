// Metrics of a scenario run (scenario.h): a per-second time series and, per
// event, the figures the targets are read from. Pure functions of the
// records and the workload's events; no I/O, safe from any thread.
//
// Units: paper seconds and paper req/s (real * speedup, real rate / speedup).
// "Gated" calls are the tenants' calls (RunRecords::attempts without the
// litellm gateway's local answers); the outside client's calls
// (RunRecords::outside_attempts) are counted apart and never in fairness.
//
// State in force at a time T (for ideal shares): the request/token caps of
// the last upstream_limits event that took effect (EventRecord::at_us) at or
// before T, else the workload's; tenant weights w_t and class omegas as the
// tenant_weight / class_omega events set them (the operator's intent, also
// in configurations without a gate). The capacity left to the tenants in a
// window, per dimension: that cap minus the outside client's use of the
// dimension over the window (its OK answers: 1 request and
// AttemptRecord::tokens each, per second).
// A tenant is active from the start (or its join event's at_us) until it
// finished (or its leave event's at_us); it is in a window when it was
// active at any time in it. An unservable tenant without an OK call
// (TenantInfo::unservable, as in metrics.h) is never active. Ideal shares: weighted DRF (fairness.h
// WeightedDrfShares) of the capacity left over the tenants active, costs
// {1, mean prompt + completion tokens of its OK calls}, computed piecewise
// where the window is cut by a tenant starting or stopping or an event
// taking effect, and averaged over the window by the pieces' lengths (a
// tenant active for half the window has half a share to achieve).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bp/loadgen/records.h"
#include "bp/loadgen/scenario.h"

namespace bp::loadgen {

// One bucket of the time series, [t_s, t_s + bucket_s).
struct TimelineBucket {
  double t_s = 0;
  std::vector<double> ok_rps;  // per tenant (RunRecords::tenants order)
  double throttled_per_s = 0;  // gated upstream 429s answered in the bucket
  double responses_per_s = 0;  // gated upstream responses (status != 0)
  double outside_ok_per_s = 0, outside_throttled_per_s = 0;
  double admits_per_s = 0, defers_per_s = 0, fail_opens_per_s = 0;  // gate decisions
};

struct Timeline {
  double bucket_s = 1;               // paper seconds
  std::vector<std::string> tenants;  // ids, RunRecords::tenants order
  std::vector<TimelineBucket> buckets;
};

// Counts and fairness over one window [from_s, to_s) of paper time.
struct WindowMetrics {
  double from_s = 0, to_s = 0;
  int64_t responses = 0, throttled = 0;  // gated upstream responses, 429s
  double share_429 = 0;                  // throttled / responses (0 if none)
  double ok_rps = 0;                     // all gated OK calls / window
  int64_t fail_opens = 0;
  int64_t outside_responses = 0, outside_ok = 0, outside_throttled = 0;
  // Capacity left to the tenants (mean over the window's pieces), per
  // dimension: cap minus the outside client's use; tokens 0 = no token cap.
  double capacity_requests_per_s = 0, capacity_tokens_per_s = 0;
  double outside_requests_per_s = 0, outside_tokens_per_s = 0;  // the use subtracted
  // What the tenants could get, req/s: the sum of their ideal shares, set by
  // the binding dimension ("requests", "tokens", or "demand" when demand caps
  // froze most queues; "" without tenants) of the window's longest piece.
  double capacity_rps = 0;
  std::string binding;
  std::vector<int> tenants;                             // tenants active in it (indices)
  std::vector<double> tenant_ok_rps, tenant_ideal_rps;  // per active tenant
  double achievement_jain = 1;                          // Jain over the active tenants' ok / ideal
};

struct EventMetrics {
  int event_index = 0;
  std::string type, text;
  double at_s = -1;       // when it took effect (-1: never ran)
  double restore_s = -1;  // state_outage: when it was restored
  bool applied = false;
  std::string detail;
  WindowMetrics before;    // [at - window_s, at)
  WindowMetrics after;     // [anchor + settle_s, + window_s), anchor = at or restore
  WindowMetrics during;    // state_outage: [at, restore)
  WindowMetrics first_2s;  // state_outage: [restore, restore + 2)
  // Paper seconds from the event until every tracked tenant's OK rate over a
  // 1 s window (sliding by 0.25 s) is within 10 % of its ideal share; the
  // value is the window's end. -1: not within window_s + settle_s.
  // Tracked: join -> the tenant; leave -> the remaining active tenants;
  // tenant_weight -> the tenant; class_omega -> the class's tenants; others
  // -> all active tenants. Not computed for state_outage (-1).
  double time_to_share_s = -1;
  std::vector<int> tracked;
};

struct ScenarioMetrics {
  Timeline timeline;
  std::vector<EventMetrics> events;  // one per workload event, file order
  uint64_t gate_fail_opens = 0;
  int64_t workflows_started = 0, workflows_completed = 0;
  int64_t activities_cancelled = 0;  // by leave events
  int64_t outside_responses = 0, outside_ok = 0, outside_throttled = 0;
};

// Window metrics over [from_us, to_us) of the run clock (real us).
WindowMetrics ComputeWindow(const RunRecords& r, const std::vector<ScenarioEvent>& events,
                            int64_t from_us, int64_t to_us);

// The first end (paper s after from_us) of a 1 paper-second window, sliding
// by 0.25 paper s from from_us, in which every tenant of `tracked` that is
// active is within 10 % of its ideal share; -1 when none until limit_us.
double TimeToFairShare(const RunRecords& r, const std::vector<ScenarioEvent>& events,
                       const std::vector<int>& tracked, int64_t from_us, int64_t limit_us);

// All of the above. bucket_s: timeline bucket in paper seconds (> 0).
ScenarioMetrics ComputeScenarioMetrics(const RunRecords& r,
                                       const std::vector<ScenarioEvent>& events,
                                       double bucket_s = 1.0);

}  // namespace bp::loadgen
