// JSON views of RunMetrics and WorkloadSummary (summary.json files), and the
// small file/format helpers of the report sources.
#include <cmath>
#include <cstdio>
#include <fstream>

#include "report_internal.h"

namespace bp::loadgen::internal {
namespace {

nlohmann::json WaitJson(const WaitTotal& w) {
  return {{"count", w.count}, {"total_ms", w.total_ms}};
}

nlohmann::json WaitsJson(const std::map<std::string, WaitTotal>& waits) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [cause, w] : waits) j[cause] = WaitJson(w);
  return j;
}

nlohmann::json LatencyJson(const LatencySummary& l) {
  return {{"count", l.count},
          {"mean_ms", l.mean_ms},
          {"p50_ms", l.p50_ms},
          {"p95_ms", l.p95_ms},
          {"p99_ms", l.p99_ms}};
}

// Streamed 200 answers: counts, TTFT (from schedule and from send) and ITL.
nlohmann::json StreamJson(const StreamMetrics& s) {
  return {{"streamed", s.streamed},
          {"cut", s.cut},
          {"ttft", LatencyJson(s.ttft)},
          {"http_ttft", LatencyJson(s.http_ttft)},
          {"itl", LatencyJson(s.itl)}};
}

}  // namespace

Status EnsureDir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Internal("cannot create directory " + dir.string() + ": " + ec.message());
  return Status::Ok();
}

Status WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Internal("cannot open " + path.string() + " for writing");
  out << text;
  out.close();
  if (!out) return Status::Internal("cannot write " + path.string());
  return Status::Ok();
}

std::string Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string MeanCiText(const MeanCi& m, double scale, int decimals) {
  std::string s = Fixed(m.mean * scale, decimals);
  if (m.n >= 2) s += " ± " + Fixed(m.half_width * scale, decimals);
  return s;
}

nlohmann::json RunMetricsJson(const RunMetrics& m) {
  nlohmann::json j;
  j["workload"] = m.workload;
  j["configuration"] = m.configuration;
  j["repeat"] = m.repeat;
  if (!m.gate_server.empty()) j["gate_server"] = m.gate_server;
  j["speedup"] = m.speedup;
  j["cap_requests_per_s"] = m.cap_requests_per_s;
  j["cap_tokens_per_s"] = m.cap_tokens_per_s;
  j["capacity_left"] = {{"requests_per_s", m.capacity_left_requests_per_s},
                        {"tokens_per_s", m.capacity_left_tokens_per_s},
                        {"outside_requests_per_s", m.outside_requests_per_s},
                        {"outside_tokens_per_s", m.outside_tokens_per_s}};
  j["contention_window_s"] = m.contention_window_s;
  j["drain_span_s"] = m.drain_span_s;
  j["activities"] = m.activities;
  j["ok_calls"] = m.ok_calls;
  j["failed_calls"] = m.failed_calls;
  j["failed_by_cause"] = m.failed_by_cause;
  j["unfinished_activities"] = m.unfinished_activities;
  j["not_started_activities"] = m.not_started_activities;
  j["tenants_never_served"] = m.tenants_never_served;
  j["tenants_unservable"] = m.tenants_unservable;
  j["max_first_ok_wait_s"] = m.max_first_ok_wait_s;
  j["cancelled_calls"] = m.cancelled_calls;
  j["gate_fail_opens"] = m.gate_fail_opens;
  j["gate_fail_opens_by_cause"] = m.gate_fail_opens_by_cause;
  j["gate_reseeds"] = m.gate_reseeds;
  j["gate_breaker_opens"] = m.gate_breaker_opens;
  j["gate_release_errors"] = m.gate_release_errors;
  j["gate_unreleased"] = m.gate_unreleased;
  j["gate_admit_real_ms"] = LatencyJson(m.gate_admit_real);
  j["upstream_responses"] = m.upstream_responses;
  j["upstream_429"] = m.upstream_429;
  j["proxy_local_429"] = m.proxy_local_429;
  j["connection_errors"] = m.connection_errors;
  j["share_429"] = m.share_429;
  j["proxy_local_429_share"] = m.proxy_local_429_share;
  j["upstream_429_by_bound"] = {{"requests", m.upstream_429_requests_bound},
                                {"tokens", m.upstream_429_tokens_bound},
                                {"other", m.upstream_429_other_bound}};
  j["deferrals"] = m.deferrals;
  j["ok_rps_window"] = m.ok_rps_window;
  j["mean_ok_rps"] = m.mean_ok_rps;
  j["achievement_jain"] = m.achievement_jain;
  j["drf_jain"] = m.drf_jain;
  j["vtc"] = {{"max_diff", m.vtc.max_diff},
              {"max_diff_u", m.vtc.max_diff_u},
              {"priority", m.vtc.priority},
              {"tenant_a", m.vtc.tenant_a},
              {"tenant_b", m.vtc.tenant_b},
              {"pairs", m.vtc.pairs},
              {"classes_skipped", m.vtc.classes_skipped}};
  j["admit_calls_per_ok_call"] = m.admit_calls_per_ok_call;
  j["admitted_ahead_share"] = m.admitted_ahead_share;
  j["mean_start_in_ms"] = m.mean_start_in_ms;
  j["http"] = LatencyJson(m.http);
  j["end_to_end"] = LatencyJson(m.end_to_end);
  j["slot_ms_per_ok_call"] = m.slot_ms_per_ok_call;
  j["in_activity_ms"] = m.in_activity_ms;
  if (m.stream.streamed > 0) j["stream"] = StreamJson(m.stream);  // absent: nothing streamed
  nlohmann::json tenants = nlohmann::json::array();
  for (const TenantMetrics& t : m.tenants) {
    tenants.push_back({{"id", t.id},
                       {"priority", t.priority},
                       {"weight", t.weight},
                       {"ok_calls", t.ok_calls},
                       {"ok_calls_window", t.ok_calls_window},
                       {"ok_rps", t.ok_rps},
                       {"tokens_per_call", t.tokens_per_call},
                       {"ideal_rps", t.ideal_rps},
                       {"achievement", t.achievement},
                       {"dominant_share", t.dominant_share},
                       {"ideal_dominant_share", t.ideal_dominant_share},
                       {"drf_achievement", t.drf_achievement},
                       {"finish_s", t.finish_s},
                       {"first_ok_wait_s", t.first_ok_wait_s},
                       {"failed_calls", t.failed_calls},
                       {"failed_by_cause", t.failed_by_cause},
                       {"unfinished", t.unfinished},
                       {"not_started", t.not_started},
                       {"unservable", t.unservable}});
    if (t.stream.streamed > 0) tenants.back()["stream"] = StreamJson(t.stream);
  }
  j["tenants"] = std::move(tenants);
  nlohmann::json classes = nlohmann::json::array();
  for (const ClassMetrics& c : m.classes) {
    classes.push_back({{"priority", c.priority},
                       {"ok_rps", c.ok_rps},
                       {"ideal_rps", c.ideal_rps},
                       {"http", LatencyJson(c.http)},
                       {"end_to_end", LatencyJson(c.end_to_end)},
                       {"slot_ms_per_ok_call", c.slot_ms_per_ok_call},
                       {"in_activity_ms", c.in_activity_ms},
                       {"workflow", LatencyJson(c.workflow)},
                       {"retries_429", WaitJson(c.retries_429)},
                       {"deferrals_by_cause", WaitsJson(c.deferrals_by_cause)},
                       {"tail_activities", c.tail_activities},
                       {"tail_deferrals_by_cause", WaitsJson(c.tail_deferrals_by_cause)}});
    if (c.stream.streamed > 0) classes.back()["stream"] = StreamJson(c.stream);
  }
  j["classes"] = std::move(classes);
  j["heatmap"] = {{"bucket_s", m.heatmap.bucket_s},
                  {"tenants", m.heatmap.tenants},
                  {"ok_rps", m.heatmap.ok_rps},
                  {"starved", m.heatmap.starved}};
  return j;
}

nlohmann::json WorkloadSummaryJson(const WorkloadSummary& s) {
  nlohmann::json j;
  j["workload"] = s.workload;
  nlohmann::json configs = nlohmann::json::object();
  for (const ConfigurationSummary& c : s.configurations) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& [name, ci] : c.metrics) {
      metrics[name] = {
          {"mean", ci.mean}, {"ci95", ci.half_width}, {"stdev", ci.stdev}, {"n", ci.n}};
    }
    configs[c.configuration] = {{"repeats", c.repeats}, {"metrics", std::move(metrics)}};
  }
  j["configurations"] = std::move(configs);
  return j;
}

}  // namespace bp::loadgen::internal
