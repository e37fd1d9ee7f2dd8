// Helpers shared by the metrics sources (not part of the public API).
#pragma once

#include <algorithm>
#include <cstdint>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/records.h"

namespace bp::loadgen::internal {

// Real microseconds on the run clock -> paper units (times speedup).
struct PaperTime {
  double speedup = 1;
  double Millis(double real_us) const { return real_us * speedup / 1e3; }
  double Seconds(double real_us) const { return real_us * speedup / 1e6; }
};

// When an OK call counts as served: its final answer, else its completion.
inline int64_t OkTimeUs(const ActivityRecord& a) {
  return a.final_answer_us >= 0 ? a.final_answer_us : a.completed_us;
}

// max_d cost_d / C_d of one call costing 1 request and `tokens` tokens,
// over the dimensions with a positive cap.
inline double DominantCost(const RunRecords& r, double tokens) {
  double share = 0;
  if (r.cap_requests_per_s > 0) share = 1.0 / r.cap_requests_per_s;
  if (r.cap_tokens_per_s > 0) share = std::max(share, tokens / r.cap_tokens_per_s);
  return share;
}

// Last activity completion (the drain end); end_us if nothing completed.
int64_t LastCompletionUs(const RunRecords& r);

// End of the contention window: the first finish among tenants with work
// (an unfinished tenant counts as the run end, max(end_us, drain end), and so
// does a tenant whose last completed activity failed).
int64_t ContentionWindowEndUs(const RunRecords& r);

// Fills each class's deferrals_by_cause, retries_429 and tail breakdown
// (metrics_waits.cpp). Needs m.classes with end_to_end computed.
void AddWaitBreakdown(const RunRecords& r, RunMetrics& m);

ServiceHeatmap BuildHeatmap(const RunRecords& r, const MetricsOptions& options,
                            int64_t drain_end_us);

}  // namespace bp::loadgen::internal
