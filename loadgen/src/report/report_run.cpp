// One run's outputs: summary.json, activities.csv, attempts.csv,
// deferrals.csv, table.md and the service heatmap figure (report.h,
// WriteRunOutputs).
#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "bp/loadgen/time_scale.h"
#include "report_internal.h"

namespace bp::loadgen {
namespace {

using internal::Fixed;

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// CSV time fields in paper ms since run start (scale.RealUsToPaperMs).
struct Csv {
  TimeScale scale;
  // -1 ("never") stays -1.
  std::string Time(int64_t us) const {
    return us < 0 ? "-1" : Fixed(scale.RealUsToPaperMs(static_cast<double>(us)), 3);
  }
  std::string Span(int64_t from, int64_t to) const {
    return (from < 0 || to < from)
               ? ""
               : Fixed(scale.RealUsToPaperMs(static_cast<double>(to - from)), 3);
  }
};

const TenantInfo* TenantOf(const RunRecords& r, int index) {
  if (index < 0 || static_cast<size_t>(index) >= r.tenants.size()) return nullptr;
  return &r.tenants[static_cast<size_t>(index)];
}

std::string ActivitiesCsv(const RunRecords& r) {
  const Csv c{TimeScale::Recorded(r.speedup)};
  std::ostringstream o;
  o << "activity_id,workflow_id,tenant,priority,ok,scheduled_ms,first_send_ms,final_answer_ms,"
       "completed_ms,http_ms,end_to_end_ms,slot_held_ms,in_activity_ms,executions,"
       "http_attempts,deferrals,prompt_tokens,completion_tokens\n";
  for (const ActivityRecord& a : r.activities) {
    const TenantInfo* t = TenantOf(r, a.tenant_index);
    o << a.id << ',' << a.workflow_id << ',' << CsvField(t ? t->id : "?") << ','
      << (t ? t->priority : 0) << ',' << (a.ok ? 1 : 0) << ',' << c.Time(a.scheduled_us) << ','
      << c.Time(a.first_send_us) << ',' << c.Time(a.final_answer_us) << ','
      << c.Time(a.completed_us) << ',' << c.Span(a.first_send_us, a.final_answer_us) << ','
      << c.Span(a.scheduled_us, a.completed_us) << ',' << c.Span(0, a.slot_held_us) << ','
      << c.Span(0, a.in_activity_us) << ',' << a.executions << ',' << a.http_attempts << ','
      << a.deferrals << ',' << a.prompt_tokens << ',' << a.completion_tokens << '\n';
  }
  return o.str();
}

std::string DeferralsCsv(const RunRecords& r) {
  const Csv c{TimeScale::Recorded(r.speedup)};
  std::ostringstream o;
  o << "activity_id,tenant,priority,at_ms,delay_ms,cause\n";
  for (const DeferralRecord& d : r.deferrals) {
    const TenantInfo* t = TenantOf(r, d.tenant_index);
    o << d.activity_id << ',' << CsvField(t ? t->id : "?") << ',' << (t ? t->priority : 0) << ','
      << c.Time(d.at_us) << ',' << c.Span(0, d.delay_us) << ',' << CsvField(d.cause) << '\n';
  }
  return o.str();
}

std::string AttemptsCsv(const RunRecords& r) {
  const Csv c{TimeScale::Recorded(r.speedup)};
  std::ostringstream o;
  o << "activity_id,tenant,priority,send_ms,done_ms,latency_ms,status,proxy_local,bound,"
       "streamed,cut_short,ttft_ms,itl_ms,token_events\n";
  for (const AttemptRecord& a : r.attempts) {
    const TenantInfo* t = TenantOf(r, a.tenant_index);
    o << a.activity_id << ',' << CsvField(t ? t->id : "?") << ',' << (t ? t->priority : 0) << ','
      << c.Time(a.send_us) << ',' << c.Time(a.done_us) << ',' << c.Span(a.send_us, a.done_us) << ','
      << a.status << ',' << (a.proxy_local ? 1 : 0) << ',' << CsvField(a.bound) << ','
      << (a.stream != 0 ? 1 : 0) << ',' << (a.stream == 2 ? 1 : 0) << ','
      << c.Span(0, a.ttft_us) << ',' << c.Span(0, a.itl_us) << ',' << a.token_events << '\n';
  }
  return o.str();
}

std::string Latency3(const LatencySummary& l) {
  return Fixed(l.p50_ms, 0) + " / " + Fixed(l.p95_ms, 0) + " / " + Fixed(l.p99_ms, 0);
}

}  // namespace

std::string RunTableMarkdown(const RunMetrics& m) {
  std::ostringstream o;
  o << "| workload | configuration | repeat | 429 share | proxy-local 429 | achievement-Jain "
       "| DRF Jain | VTC diff (U) | Admit / OK | OK req/s (window) | mean OK req/s "
       "| slot ms / OK call | in-activity ms | window s | drain s |\n"
       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  // "-": not measured (no pair of one class backlogged together; not bp).
  auto or_dash = [](double v, int places) { return v < 0 ? std::string("-") : Fixed(v, places); };
  o << "| " << m.workload << " | " << m.configuration << " | " << m.repeat << " | "
    << Fixed(100 * m.share_429, 1) << " % | " << Fixed(100 * m.proxy_local_429_share, 1) << " % | "
    << Fixed(m.achievement_jain, 3) << " | " << Fixed(m.drf_jain, 3) << " | "
    << or_dash(m.vtc.max_diff_u, 2) << " | " << or_dash(m.admit_calls_per_ok_call, 2) << " | "
    << Fixed(m.ok_rps_window, 1) << " | " << Fixed(m.mean_ok_rps, 1) << " | "
    << Fixed(m.slot_ms_per_ok_call, 0) << " | " << Fixed(m.in_activity_ms, 0) << " | "
    << Fixed(m.contention_window_s, 1) << " | " << Fixed(m.drain_span_s, 1) << " |\n";
  return o.str();
}

namespace {

// "gate_reject 12, other 1" (empty when nothing failed).
std::string CauseList(const std::map<std::string, int64_t>& by_cause) {
  std::string s;
  for (const auto& [cause, n] : by_cause) {
    s += (s.empty() ? "" : ", ") + cause + " " + std::to_string(n);
  }
  return s;
}

// At most kListed entries, then "and N more": a run of 10 000 tenants keeps
// its first lines short.
constexpr size_t kListed = 5;
std::string ListSummary(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < kListed; ++i) s += (i > 0 ? sep : "") + items[i];
  if (items.size() > kListed) s += " and " + std::to_string(items.size() - kListed) + " more";
  return s;
}

// The note on tenants none of whose calls can ever be served.
std::string UnservableNote(const RunMetrics& m) {
  if (m.tenants_unservable == 0) return "";
  std::vector<std::string> ids;
  for (const TenantMetrics& t : m.tenants) {
    if (t.unservable) ids.push_back(t.id);
  }
  return "Excluded from fairness: " + std::to_string(m.tenants_unservable) +
         " tenant(s) whose every call is above the largest call the upstream serves (" +
         ListSummary(ids, ", ") +
         "); no ideal share, not in the Jain indexes, not counted as never served.\n\n";
}

// The warning at the top of table.md when activities failed, were scheduled
// and never finished, or a tenant was never served; a note when only work
// that was never scheduled remains (a run stopped at its length cap, e.g. a
// scenario whose tenants have more work than the run); empty for a clean run.
std::string FailureNotice(const RunMetrics& m) {
  if (m.failed_calls == 0 && m.unfinished_activities == 0 && m.tenants_never_served == 0) {
    if (m.not_started_activities == 0) return "";
    return "Stopped before all work was scheduled: " + std::to_string(m.not_started_activities) +
           " activities never started (the run length cap or the scenario ended them).\n\n";
  }
  std::ostringstream o;
  o << "**Incomplete run:** " << m.failed_calls << " failed activities";
  if (m.failed_calls > 0) o << " (" << CauseList(m.failed_by_cause) << ")";
  o << ", " << m.unfinished_activities << " unfinished, " << m.tenants_never_served
    << " tenant(s) never served";
  if (m.not_started_activities > 0) o << ", " << m.not_started_activities << " never started";
  std::vector<std::string> per_tenant;
  for (const TenantMetrics& t : m.tenants) {
    if (t.failed_calls == 0 && t.unfinished == 0 && t.first_ok_wait_s >= 0) continue;
    std::string e = t.id + " (failed " + std::to_string(t.failed_calls);
    if (t.failed_calls > 0) e += ": " + CauseList(t.failed_by_cause);
    e += "; unfinished " + std::to_string(t.unfinished);
    e += t.unservable ? "; unservable)" : t.first_ok_wait_s < 0 ? "; never served)" : ")";
    per_tenant.push_back(std::move(e));
  }
  o << ". Per tenant: " << ListSummary(per_tenant, " ")
    << ". Fairness and rates below are over the contention window, which a tenant "
       "whose work ended in failures does not end.\n\n";
  return o.str();
}

std::string WaitCell(const WaitTotal& w) {
  return std::to_string(w.count) + " / " + Fixed(w.total_ms, 0);
}

// Streamed calls per class and tenant: TTFT and inter-token latency (paper
// ms); nothing for a run without streamed calls.
std::string StreamMarkdown(const RunMetrics& m) {
  if (m.stream.streamed == 0) return "";
  std::ostringstream o;
  o << "\nStreamed calls (200 answers), paper ms: TTFT from the activity's first schedule "
       "to its first token (queue, gate and retries included), HTTP TTFT from the request's "
       "send, ITL each answer's mean gap between token events.\n\n"
       "| class / tenant | streamed | cut short | TTFT p50/p95/p99 ms | HTTP TTFT p50/p95/p99 ms "
       "| ITL p50/p95/p99 ms |\n|---|---|---|---|---|---|\n";
  auto row = [&o](const std::string& name, const StreamMetrics& s) {
    if (s.streamed == 0) return;
    o << "| " << name << " | " << s.streamed << " | " << s.cut << " | "
      << (s.ttft.count > 0 ? Latency3(s.ttft) : "-") << " | "
      << (s.http_ttft.count > 0 ? Latency3(s.http_ttft) : "-") << " | "
      << (s.itl.count > 0 ? Latency3(s.itl) : "-") << " |\n";
  };
  // Names appended in place: GCC 12 misreads `"P" + std::string` (-Wrestrict).
  for (const ClassMetrics& c : m.classes) {
    std::string name = "P";
    name.append(std::to_string(c.priority));
    row(name, c.stream);
  }
  for (const TenantMetrics& t : m.tenants) {
    std::string name = t.id;
    name.append(" (P").append(std::to_string(t.priority)).append(")");
    row(name, t.stream);
  }
  row("all", m.stream);
  return o.str();
}

// Durable timers per cause and 429 retry waits per class (count / total paper
// ms), over all activities and over the end-to-end tail (>= class p95).
std::string WaitsMarkdown(const RunMetrics& m) {
  std::vector<std::string> causes;
  for (const ClassMetrics& c : m.classes) {
    for (const auto& [cause, w] : c.deferrals_by_cause) {
      if (std::find(causes.begin(), causes.end(), cause) == causes.end()) causes.push_back(cause);
    }
  }
  std::ostringstream o;
  o << "\nWhere the time goes (count / total paper ms): durable timers by cause (gate DEFER "
       "binding, or 429 deferred) and upstream 429s retried (answer -> next send); tail = OK "
       "activities with end-to-end >= the class p95.\n\n| class | 429 retries |";
  for (const auto& cause : causes) o << " timers " << cause << " |";
  o << " tail n |";
  for (const auto& cause : causes) o << " tail " << cause << " |";
  o << "\n|---|---|";
  for (size_t i = 0; i < 2 * causes.size() + 1; ++i) o << "---|";
  o << "\n";
  for (const ClassMetrics& c : m.classes) {
    o << "| P" << c.priority << " | " << WaitCell(c.retries_429) << " |";
    for (const auto& cause : causes) {
      auto it = c.deferrals_by_cause.find(cause);
      o << " " << WaitCell(it == c.deferrals_by_cause.end() ? WaitTotal{} : it->second) << " |";
    }
    o << " " << c.tail_activities << " |";
    for (const auto& cause : causes) {
      auto it = c.tail_deferrals_by_cause.find(cause);
      o << " " << WaitCell(it == c.tail_deferrals_by_cause.end() ? WaitTotal{} : it->second)
        << " |";
    }
    o << "\n";
  }
  return o.str();
}

std::string RunMarkdown(const RunMetrics& m) {
  std::ostringstream o;
  o << "# " << m.workload << " / " << m.configuration << " / repeat " << m.repeat << "\n\n"
    << FailureNotice(m) << UnservableNote(m) << "Paper units (speedup " << Fixed(m.speedup, 2)
    << "); caps " << Fixed(m.cap_requests_per_s, 0) << " req/s";
  if (m.cap_tokens_per_s > 0) o << ", " << Fixed(m.cap_tokens_per_s, 0) << " tok/s";
  if (m.outside_requests_per_s > 0) {
    o << "; the outside client used " << Fixed(m.outside_requests_per_s, 1) << " req/s, "
      << Fixed(m.outside_tokens_per_s, 0) << " tok/s, leaving the tenants "
      << Fixed(m.capacity_left_requests_per_s, 1) << " req/s";
    if (m.cap_tokens_per_s > 0) o << ", " << Fixed(m.capacity_left_tokens_per_s, 0) << " tok/s";
    o << " (the ideal shares' capacity)";
  }
  o << ". Rates over the contention window unless noted.\n\n" << RunTableMarkdown(m) << "\n";
  o << "Upstream 429s by bound dimension: requests " << m.upstream_429_requests_bound << ", tokens "
    << m.upstream_429_tokens_bound << ", other " << m.upstream_429_other_bound << " (of "
    << m.upstream_429 << " in " << m.upstream_responses << " responses); proxy-local 429s "
    << m.proxy_local_429 << "; connection errors " << m.connection_errors << "; deferrals "
    << m.deferrals
    << ". Longest wait for a tenant's first OK call: " << Fixed(m.max_first_ok_wait_s, 2)
    << " s.\n\n";
  if (m.gate_fail_opens > 0 || m.gate_reseeds > 0 || m.gate_release_errors > 0) {
    std::map<std::string, int64_t> causes;
    for (const auto& [cause, n] : m.gate_fail_opens_by_cause)
      causes[cause] = static_cast<int64_t>(n);
    o << "Gate fail-opens: " << m.gate_fail_opens << " ("
      << (causes.empty() ? std::string("causes not recorded") : CauseList(causes))
      << "); re-seeds of the target: " << m.gate_reseeds
      << "; failed releases: " << m.gate_release_errors << ".\n\n";
  }
  if (m.gate_admit_real.count > 0) {
    const LatencySummary& a = m.gate_admit_real;
    o << "Gate Admit calls: " << a.count << ", real ms p50/p95/p99 " << Fixed(a.p50_ms, 3) << " / "
      << Fixed(a.p95_ms, 3) << " / " << Fixed(a.p99_ms, 3) << " (the call on its gate thread, "
      << "not paper time).\n\n";
  }
  o << "| class | OK req/s | ideal req/s | HTTP p50/p95/p99 ms | end-to-end p50/p95/p99 ms "
       "| in-activity ms | slot ms / OK call | workflow mean s (n) |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const ClassMetrics& c : m.classes) {
    o << "| P" << c.priority << " | " << Fixed(c.ok_rps, 2) << " | " << Fixed(c.ideal_rps, 2)
      << " | " << Latency3(c.http) << " | " << Latency3(c.end_to_end) << " | "
      << Fixed(c.in_activity_ms, 0) << " | " << Fixed(c.slot_ms_per_ok_call, 0) << " | "
      << Fixed(c.workflow.mean_ms / 1e3, 1) << " (" << c.workflow.count << ") |\n";
  }
  o << "\n| tenant | class | weight | OK calls | OK req/s | ideal req/s | achievement "
       "| dominant share/s | ideal | DRF achievement | first OK s | failed (by cause) "
       "| unfinished |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const TenantMetrics& t : m.tenants) {
    o << "| " << t.id << " | P" << t.priority << " | " << Fixed(t.weight, 2) << " | " << t.ok_calls
      << " | " << Fixed(t.ok_rps, 2) << " | "
      << (t.unservable ? std::string("- | unservable")
                       : Fixed(t.ideal_rps, 2) + " | " + Fixed(t.achievement, 3))
      << " | " << Fixed(t.dominant_share, 4) << " | "
      << (t.unservable ? std::string("- | -")
                       : Fixed(t.ideal_dominant_share, 4) + " | " + Fixed(t.drf_achievement, 3))
      << " | " << (t.first_ok_wait_s >= 0 ? Fixed(t.first_ok_wait_s, 2) : std::string("never"))
      << " | " << t.failed_calls;
    if (t.failed_calls > 0) o << " (" << CauseList(t.failed_by_cause) << ")";
    o << " | " << t.unfinished << " |\n";
  }
  o << StreamMarkdown(m);
  o << WaitsMarkdown(m);
  if (!m.heatmap.tenants.empty()) o << "\n![service heatmap](heatmap.png)\n";
  return o.str();
}

}  // namespace

Status WriteRunOutputs(const std::filesystem::path& dir, const RunRecords& records,
                       const RunMetrics& metrics, const ReportOptions& options) {
  if (Status s = internal::EnsureDir(dir); !s.ok()) return s;
  const std::pair<const char*, std::string> files[] = {
      {"summary.json", internal::RunMetricsJson(metrics).dump(2) + "\n"},
      {"activities.csv", ActivitiesCsv(records)},
      {"attempts.csv", AttemptsCsv(records)},
      {"deferrals.csv", DeferralsCsv(records)},
      {"table.md", RunMarkdown(metrics)},
  };
  for (const auto& [name, text] : files) {
    if (Status s = internal::WriteTextFile(dir / name, text); !s.ok()) return s;
  }
  if (!options.figures || metrics.heatmap.tenants.empty()) return Status::Ok();
  const std::string title = metrics.workload + " / " + metrics.configuration + ": service heatmap";
  return internal::HeatmapFigure(dir, "heatmap", metrics.heatmap, title, options);
}

}  // namespace bp::loadgen
