// Helpers shared by the metrics sources (not part of the public API).
#pragma once

#include <algorithm>
#include <cstdint>

#include "bp/loadgen/fairness.h"
#include "bp/loadgen/metrics.h"
#include "bp/loadgen/records.h"
#include "bp/loadgen/time_scale.h"

namespace bp::loadgen::internal {

// When an OK call counts as served: its final answer, else its completion.
inline int64_t OkTimeUs(const ActivityRecord& a) {
  return a.final_answer_us >= 0 ? a.final_answer_us : a.completed_us;
}

// max_d cost_d / C_d of one call costing 1 request and `tokens` tokens,
// over the dimensions with a positive cap.
inline double DominantCost(double cap_requests_per_s, double cap_tokens_per_s, double tokens) {
  double share = 0;
  if (cap_requests_per_s > 0) share = 1.0 / cap_requests_per_s;
  if (cap_tokens_per_s > 0) share = std::max(share, tokens / cap_tokens_per_s);
  return share;
}

// The capacity left to the tenants, per dimension, paper units: the cap
// minus the outside client's use of that dimension (its OK answers in the
// span, 1 request and AttemptRecord::tokens each, per paper second), at
// least 0. A token cap of 0 (no token limit) stays 0.
struct CapacityLeft {
  double requests_per_s = 0, tokens_per_s = 0;
  double outside_requests_per_s = 0, outside_tokens_per_s = 0;  // the use subtracted
};
CapacityLeft CapacityLeftOf(const RunRecords& r, double cap_requests_per_s, double cap_tokens_per_s,
                            int64_t from_us, int64_t to_us);

// Last activity completion (the drain end); end_us if nothing completed.
int64_t LastCompletionUs(const RunRecords& r);

// End of the contention window: the first finish among tenants with work
// (an unfinished tenant counts as the run end, max(end_us, drain end), and so
// does a tenant whose last completed activity failed).
int64_t ContentionWindowEndUs(const RunRecords& r);

// count, mean and p50/p95/p99 of `ms` (statistics.h Percentile).
LatencySummary Summarize(const std::vector<double>& ms);

// Fills the streaming metrics of the run, its classes and tenants
// (metrics_stream.cpp). Needs m.classes and m.tenants.
void AddStreamMetrics(const RunRecords& r, RunMetrics& m);

// Fills each class's deferrals_by_cause, retries_429 and tail breakdown
// (metrics_waits.cpp). Needs m.classes with end_to_end computed.
void AddWaitBreakdown(const RunRecords& r, RunMetrics& m);

// Tenant t's queue for the ideal shares (WeightedDrfShares), with tenant
// weight w_t and class weight omega_k, under the run's share rule: grouped
// by class (hierarchical, the gate's default) or one weight w_t * omega_k
// (flat). Its cost and demand cap are the caller's.
inline FairShareQueue ShareQueue(const RunRecords& r, size_t t, double w_t, double omega_k) {
  FairShareQueue q;
  if (r.flat_share) {
    q.weight = w_t * omega_k;
  } else {
    q.weight = w_t;
    q.group = r.tenants[t].priority;
    q.group_weight = omega_k;
  }
  return q;
}

ServiceHeatmap BuildHeatmap(const RunRecords& r, const MetricsOptions& options,
                            int64_t drain_end_us);

}  // namespace bp::loadgen::internal
