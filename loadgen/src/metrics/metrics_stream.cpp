// Streaming metrics (metrics.h StreamMetrics): time to first token and
// inter-token latency per run, class and tenant, from the attempts' stream
// fields (records.h), in paper ms.
#include <map>
#include <vector>

#include "metrics_internal.h"

namespace bp::loadgen::internal {
namespace {

struct Samples {
  int64_t streamed = 0, cut = 0;
  std::vector<double> ttft_ms, http_ttft_ms, itl_ms;
  StreamMetrics Summary() const {
    return {streamed, cut, Summarize(ttft_ms), Summarize(http_ttft_ms), Summarize(itl_ms)};
  }
};

}  // namespace

void AddStreamMetrics(const RunRecords& r, RunMetrics& m) {
  const TimeScale scale = TimeScale::Recorded(r.speedup);
  Samples all;
  std::map<int, Samples> by_class;
  std::vector<Samples> by_tenant(r.tenants.size());
  for (const AttemptRecord& a : r.attempts) {
    if (a.stream == 0 || a.status != 200) continue;
    if (a.tenant_index < 0 || static_cast<size_t>(a.tenant_index) >= r.tenants.size()) continue;
    const int k = r.tenants[static_cast<size_t>(a.tenant_index)].priority;
    for (Samples* s : {&all, &by_class[k], &by_tenant[static_cast<size_t>(a.tenant_index)]}) {
      ++s->streamed;
      if (a.stream == 2) ++s->cut;
      if (a.ttft_us >= 0) {
        s->http_ttft_ms.push_back(scale.RealUsToPaperMs(a.ttft_us));
        if (a.activity_id >= 0 && static_cast<size_t>(a.activity_id) < r.activities.size()) {
          const int64_t scheduled = r.activities[static_cast<size_t>(a.activity_id)].scheduled_us;
          s->ttft_ms.push_back(scale.RealUsToPaperMs(a.send_us + a.ttft_us - scheduled));
        }
      }
      if (a.itl_us >= 0) s->itl_ms.push_back(scale.RealUsToPaperMs(a.itl_us));
    }
  }
  m.stream = all.Summary();
  for (ClassMetrics& c : m.classes) {
    if (auto it = by_class.find(c.priority); it != by_class.end()) c.stream = it->second.Summary();
  }
  for (size_t t = 0; t < m.tenants.size() && t < by_tenant.size(); ++t) {
    m.tenants[t].stream = by_tenant[t].Summary();
  }
}

}  // namespace bp::loadgen::internal
