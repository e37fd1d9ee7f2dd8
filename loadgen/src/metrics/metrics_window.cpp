// Run spans (drain end, contention window) and the per-tenant service heatmap
// of Fig. 4: OK req/s per tenant per time bucket, with starved cells marked.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "metrics_internal.h"

namespace bp::loadgen::internal {
namespace {

// 1, 2 or 5 times a power of ten, >= raw.
double NiceBucket(double raw) {
  if (!(raw > 0) || !std::isfinite(raw)) return 1.0;
  const double p10 = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p10 >= raw * (1 - 1e-12)) return m * p10;
  }
  return 10 * p10;
}

}  // namespace

int64_t LastCompletionUs(const RunRecords& r) {
  int64_t last = -1;
  for (const ActivityRecord& a : r.activities) last = std::max(last, a.completed_us);
  return last >= 0 ? last : std::max<int64_t>(r.end_us, 0);
}

CapacityLeft CapacityLeftOf(const RunRecords& r, double cap_requests_per_s, double cap_tokens_per_s,
                            int64_t from_us, int64_t to_us) {
  CapacityLeft c;
  const double span_s = TimeScale::Recorded(r.speedup).RealUsToPaperS(
      static_cast<double>(std::max<int64_t>(to_us - from_us, 0)));
  if (span_s > 0) {
    for (const AttemptRecord& a : r.outside_attempts) {
      if (a.status != 200 || a.done_us < from_us || a.done_us >= to_us) continue;
      c.outside_requests_per_s += 1 / span_s;
      c.outside_tokens_per_s += static_cast<double>(a.tokens) / span_s;
    }
  }
  c.requests_per_s = std::max(0.0, cap_requests_per_s - c.outside_requests_per_s);
  if (cap_tokens_per_s > 0) {
    c.tokens_per_s = std::max(0.0, cap_tokens_per_s - c.outside_tokens_per_s);
  }
  return c;
}

int64_t ContentionWindowEndUs(const RunRecords& r) {
  const int64_t run_end = std::max(r.end_us, LastCompletionUs(r));
  std::vector<bool> has_work(r.tenants.size(), false);
  // Per tenant: its last completed activity, and whether that one failed.
  std::vector<int64_t> last_done(r.tenants.size(), -1);
  std::vector<bool> ended_failed(r.tenants.size(), false);
  for (size_t t = 0; t < r.tenants.size(); ++t) has_work[t] = r.tenants[t].total_activities > 0;
  for (const ActivityRecord& a : r.activities) {
    if (a.tenant_index >= 0 && static_cast<size_t>(a.tenant_index) < has_work.size()) {
      const auto t = static_cast<size_t>(a.tenant_index);
      has_work[t] = true;
      if (a.completed_us >= 0 && a.completed_us >= last_done[t]) {
        last_done[t] = a.completed_us;
        ended_failed[t] = !a.ok;
      }
    }
  }
  int64_t end = run_end;
  for (size_t t = 0; t < r.tenants.size(); ++t) {
    // Failures do not end the window; a tenant that left (scenario) ends
    // nothing either: its share went to the others.
    if (!has_work[t] || ended_failed[t] || r.tenants[t].leave_us >= 0) continue;
    const int64_t finish = r.tenants[t].finish_us >= 0 ? r.tenants[t].finish_us : run_end;
    end = std::min(end, finish);
  }
  return std::max<int64_t>(end, 0);
}

ServiceHeatmap BuildHeatmap(const RunRecords& r, const MetricsOptions& options,
                            int64_t drain_end_us) {
  const TimeScale scale = TimeScale::Recorded(r.speedup);
  ServiceHeatmap h;
  const double span_s = scale.RealUsToPaperS(static_cast<double>(drain_end_us));
  h.bucket_s = options.heatmap_bucket_s > 0 ? options.heatmap_bucket_s : NiceBucket(span_s / 60);
  const auto buckets = static_cast<size_t>(std::max(1.0, std::ceil(span_s / h.bucket_s)));

  // Rows: P1 first, then by tenant order.
  std::vector<int> order(r.tenants.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return r.tenants[static_cast<size_t>(a)].priority < r.tenants[static_cast<size_t>(b)].priority;
  });
  std::vector<size_t> row_of(r.tenants.size());
  for (size_t row = 0; row < order.size(); ++row) {
    const TenantInfo& t = r.tenants[static_cast<size_t>(order[row])];
    h.tenants.push_back(t.id + " P" + std::to_string(t.priority));
    h.tenant_index.push_back(order[row]);
    row_of[static_cast<size_t>(order[row])] = row;
  }
  std::vector<std::vector<int64_t>> count(order.size(), std::vector<int64_t>(buckets, 0));
  for (const ActivityRecord& a : r.activities) {
    if (!a.ok || a.tenant_index < 0 || static_cast<size_t>(a.tenant_index) >= r.tenants.size())
      continue;
    const int64_t ok_us = OkTimeUs(a);
    if (ok_us < 0) continue;
    const auto b = std::min(
        buckets - 1,
        static_cast<size_t>(scale.RealUsToPaperS(static_cast<double>(ok_us)) / h.bucket_s));
    ++count[row_of[static_cast<size_t>(a.tenant_index)]][b];
  }
  h.ok_rps.assign(order.size(), std::vector<double>(buckets, 0.0));
  h.starved.assign(order.size(), std::vector<bool>(buckets, false));
  for (size_t row = 0; row < order.size(); ++row) {
    const TenantInfo& t = r.tenants[static_cast<size_t>(order[row])];
    const double start_s =
        scale.RealUsToPaperS(static_cast<double>(std::max<int64_t>(t.start_us, 0)));
    const double finish_s =
        scale.RealUsToPaperS(static_cast<double>(t.finish_us >= 0 ? t.finish_us : drain_end_us));
    for (size_t b = 0; b < buckets; ++b) {
      h.ok_rps[row][b] = static_cast<double>(count[row][b]) / h.bucket_s;
      const double b0 = static_cast<double>(b) * h.bucket_s, b1 = b0 + h.bucket_s;
      const bool demand = t.total_activities > 0 && start_s < b1 && finish_s > b0;
      h.starved[row][b] = demand && count[row][b] == 0;
    }
  }
  return h;
}

}  // namespace bp::loadgen::internal
