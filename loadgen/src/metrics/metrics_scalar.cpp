// ScalarMetrics: a run's headline numbers as flat (name, value) pairs, the
// unit of aggregation over repeats (report_workload.cpp) and of the
// comparison table (report_comparison.cpp). Names are listed in metrics.h.
#include "bp/loadgen/metrics.h"

namespace bp::loadgen {

std::vector<std::pair<std::string, double>> ScalarMetrics(const RunMetrics& m) {
  std::vector<std::pair<std::string, double>> out;
  auto add = [&out](std::string name, double v) { out.emplace_back(std::move(name), v); };
  add("share_429", m.share_429);
  add("proxy_local_429_share", m.proxy_local_429_share);
  add("achievement_jain", m.achievement_jain);
  add("drf_jain", m.drf_jain);
  if (m.vtc.max_diff_u >= 0) add("vtc_max_diff_u", m.vtc.max_diff_u);
  if (m.admit_calls_per_ok_call >= 0) add("admit_calls_per_ok_call", m.admit_calls_per_ok_call);
  add("ok_rps_window", m.ok_rps_window);
  add("mean_ok_rps", m.mean_ok_rps);
  add("slot_ms_per_ok_call", m.slot_ms_per_ok_call);
  add("in_activity_ms", m.in_activity_ms);
  add("contention_window_s", m.contention_window_s);
  add("drain_span_s", m.drain_span_s);
  add("http.p50_ms", m.http.p50_ms);
  add("http.p95_ms", m.http.p95_ms);
  add("http.p99_ms", m.http.p99_ms);
  add("end_to_end.p95_ms", m.end_to_end.p95_ms);
  add("failed_calls", static_cast<double>(m.failed_calls));
  add("unfinished_activities", static_cast<double>(m.unfinished_activities));
  add("tenants_never_served", static_cast<double>(m.tenants_never_served));
  add("max_first_ok_wait_s", m.max_first_ok_wait_s);
  if (m.tenants_unservable > 0)
    add("tenants_unservable", static_cast<double>(m.tenants_unservable));
  for (const auto& [cause, n] : m.failed_by_cause) add("failed." + cause, static_cast<double>(n));
  if (m.upstream_429 > 0) {
    const auto all = static_cast<double>(m.upstream_429);
    add("share_429_requests_bound", static_cast<double>(m.upstream_429_requests_bound) / all);
    add("share_429_tokens_bound", static_cast<double>(m.upstream_429_tokens_bound) / all);
  }
  // Streaming latencies where there were samples (prefix "stream." for the run).
  auto add_stream = [&add](const std::string& p, const StreamMetrics& s) {
    if (s.ttft.count > 0) {
      add(p + "ttft_p50_ms", s.ttft.p50_ms);
      add(p + "ttft_p95_ms", s.ttft.p95_ms);
      add(p + "ttft_p99_ms", s.ttft.p99_ms);
    }
    if (s.http_ttft.count > 0) add(p + "http_ttft_p95_ms", s.http_ttft.p95_ms);
    if (s.itl.count > 0) {
      add(p + "itl_p50_ms", s.itl.p50_ms);
      add(p + "itl_p95_ms", s.itl.p95_ms);
      add(p + "itl_p99_ms", s.itl.p99_ms);
    }
  };
  if (m.stream.streamed > 0) {
    add_stream("stream.", m.stream);
    add("stream.cut", static_cast<double>(m.stream.cut));
  }
  for (const ClassMetrics& c : m.classes) {
    const std::string p = "class.P" + std::to_string(c.priority) + ".";
    add_stream(p, c.stream);
    add(p + "ok_rps", c.ok_rps);
    // Latencies only where there were samples, so repeats average real values.
    if (c.http.count > 0) {
      add(p + "http_p50_ms", c.http.p50_ms);
      add(p + "http_p95_ms", c.http.p95_ms);
      add(p + "http_p99_ms", c.http.p99_ms);
    }
    if (c.end_to_end.count > 0) add(p + "end_to_end_p95_ms", c.end_to_end.p95_ms);
    if (c.workflow.count > 0) add(p + "workflow_mean_s", c.workflow.mean_ms / 1e3);
    if (c.workflow_end_mean_s >= 0) add(p + "workflow_end_mean_s", c.workflow_end_mean_s);
    add(p + "slot_ms_per_ok_call", c.slot_ms_per_ok_call);
  }
  for (const TenantMetrics& t : m.tenants) {
    const std::string p = "tenant." + t.id + ".";
    add(p + "ok_rps", t.ok_rps);
    add_stream(p, t.stream);
    if (!t.unservable) {  // no share to achieve
      add(p + "achievement", t.achievement);
      add(p + "drf_achievement", t.drf_achievement);
    }
    if (t.first_ok_wait_s >= 0) add(p + "first_ok_wait_s", t.first_ok_wait_s);
    for (const auto& [cause, n] : t.failed_by_cause) {
      add(p + "failed." + cause, static_cast<double>(n));
    }
  }
  return out;
}

}  // namespace bp::loadgen
