// A scenario run's extra outputs (report.h, WriteScenarioOutputs): the time
// series as CSV and figure, the per-event table, and the "scenario" section
// of summary.json.
#include <fstream>
#include <sstream>

#include "report_internal.h"

namespace bp::loadgen {
namespace {

using internal::Fixed;

// Text inside a gnuplot double-quoted string.
std::string GpText(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string Seconds(double s) { return s < 0 ? "-" : Fixed(s, 2) + " s"; }

nlohmann::json WindowJson(const WindowMetrics& w, const std::vector<std::string>& ids) {
  nlohmann::json tenants = nlohmann::json::array();
  for (size_t i = 0; i < w.tenants.size(); ++i) {
    tenants.push_back({{"tenant", ids[static_cast<size_t>(w.tenants[i])]},
                       {"ok_rps", w.tenant_ok_rps[i]},
                       {"ideal_rps", w.tenant_ideal_rps[i]}});
  }
  return {{"from_s", w.from_s},
          {"to_s", w.to_s},
          {"responses", w.responses},
          {"throttled", w.throttled},
          {"share_429", w.share_429},
          {"ok_rps", w.ok_rps},
          {"capacity_requests_per_s", w.capacity_requests_per_s},
          {"capacity_tokens_per_s", w.capacity_tokens_per_s},
          {"capacity_rps", w.capacity_rps},
          {"binding", w.binding},
          {"achievement_jain", w.achievement_jain},
          {"fail_opens", w.fail_opens},
          {"outside",
           {{"responses", w.outside_responses},
            {"ok", w.outside_ok},
            {"throttled", w.outside_throttled},
            {"requests_per_s", w.outside_requests_per_s},
            {"tokens_per_s", w.outside_tokens_per_s}}},
          {"tenants", tenants}};
}

nlohmann::json ScenarioJson(const ScenarioMetrics& m) {
  const std::vector<std::string>& ids = m.timeline.tenants;
  nlohmann::json events = nlohmann::json::array();
  for (const EventMetrics& e : m.events) {
    nlohmann::json tracked = nlohmann::json::array();
    for (int t : e.tracked) tracked.push_back(ids[static_cast<size_t>(t)]);
    nlohmann::json j = {{"type", e.type},
                        {"text", e.text},
                        {"at_s", e.at_s},
                        {"applied", e.applied},
                        {"detail", e.detail},
                        {"before", WindowJson(e.before, ids)},
                        {"after", WindowJson(e.after, ids)}};
    if (e.type == "state_outage") {
      j["restore_s"] = e.restore_s;
      j["during"] = WindowJson(e.during, ids);
      j["first_2s_after_restore"] = WindowJson(e.first_2s, ids);
    } else {
      j["time_to_share_s"] = e.time_to_share_s;
      j["tracked"] = tracked;
    }
    events.push_back(std::move(j));
  }
  return {{"gate_fail_opens", m.gate_fail_opens},
          {"workflows_started", m.workflows_started},
          {"workflows_completed", m.workflows_completed},
          {"activities_cancelled", m.activities_cancelled},
          {"outside",
           {{"responses", m.outside_responses},
            {"ok", m.outside_ok},
            {"throttled", m.outside_throttled}}},
          {"events", events}};
}

std::string TimelineCsv(const Timeline& tl, char sep) {
  std::ostringstream o;
  o << (sep == ',' ? "" : "# ") << "t_s";
  for (const std::string& id : tl.tenants) o << sep << "ok_rps." << id;
  o << sep << "throttled_per_s" << sep << "responses_per_s" << sep << "outside_ok_per_s" << sep
    << "outside_throttled_per_s" << sep << "admits_per_s" << sep << "defers_per_s" << sep
    << "fail_opens_per_s\n";
  for (const TimelineBucket& b : tl.buckets) {
    o << Fixed(b.t_s, 3);
    for (double v : b.ok_rps) o << sep << Fixed(v, 2);
    for (double v :
         {b.throttled_per_s, b.responses_per_s, b.outside_ok_per_s, b.outside_throttled_per_s,
          b.admits_per_s, b.defers_per_s, b.fail_opens_per_s}) {
      o << sep << Fixed(v, 2);
    }
    o << '\n';
  }
  return o.str();
}

std::string ScenarioMarkdown(const RunMetrics& run, const ScenarioMetrics& m) {
  std::ostringstream o;
  o << "# " << run.workload << " / " << run.configuration << " / repeat " << run.repeat
    << ": scenario\n\nPaper units. Gate fail-opens " << m.gate_fail_opens;
  if (!run.gate_fail_opens_by_cause.empty()) {
    std::string causes;
    for (const auto& [cause, n] : run.gate_fail_opens_by_cause) {
      causes += (causes.empty() ? "" : ", ") + cause + " " + std::to_string(n);
    }
    o << " (" << causes << ")";
  }
  o << "; workflows " << m.workflows_completed << " of " << m.workflows_started
    << " started completed; " << m.activities_cancelled
    << " activities cancelled by leave events; outside client " << m.outside_ok << " OK, "
    << m.outside_throttled << " 429 of " << m.outside_responses
    << " responses (not in the figures below).\n\n"
    << "Windows: before = the window_s before the event; after = window_s from the event "
       "(state outage: from the restore) plus settle_s. Jain = achievement-Jain over the "
       "gated tenants active in the window against the capacity left to them (the caps in "
       "force minus the outside client's use, per dimension). Capacity = the req/s the "
       "tenants could get on the binding dimension (the sum of their ideal shares). Time to "
       "share = until every tracked tenant is within 10 % of its fair share over 1 s.\n\n"
    << "| event | at | applied | 429 before | 429 after | Jain before | Jain after | OK req/s "
       "after (capacity, binding) | time to share | fail-opens after | detail |\n"
    << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const EventMetrics& e : m.events) {
    o << "| " << e.text << " | " << Seconds(e.at_s) << " | " << (e.applied ? "yes" : "no") << " | "
      << Fixed(100 * e.before.share_429, 1) << " % | " << Fixed(100 * e.after.share_429, 1)
      << " % | " << Fixed(e.before.achievement_jain, 3) << " | "
      << Fixed(e.after.achievement_jain, 3) << " | " << Fixed(e.after.ok_rps, 1) << " ("
      << Fixed(e.after.capacity_rps, 1) << ", " << (e.after.binding.empty() ? "-" : e.after.binding)
      << ") | " << Seconds(e.time_to_share_s) << " | " << e.after.fail_opens << " | " << e.detail;
    if (e.type == "state_outage" && e.restore_s >= 0) {
      o << "; during: 429 " << Fixed(100 * e.during.share_429, 1) << " %, fail-opens "
        << e.during.fail_opens << ", OK req/s " << Fixed(e.during.ok_rps, 1);
      o << "; restored at " << Seconds(e.restore_s) << ", first 2 s after: 429 "
        << Fixed(100 * e.first_2s.share_429, 1) << " %, fail-opens " << e.first_2s.fail_opens;
    }
    o << " |\n";
  }
  o << "\n![time series](timeline.png)\n";
  return o.str();
}

Status TimelineFigure(const std::filesystem::path& dir, const RunMetrics& run,
                      const ScenarioMetrics& m, const ReportOptions& options) {
  const Timeline& tl = m.timeline;
  const std::filesystem::path dat = dir / "timeline.dat", gp_path = dir / "timeline.gp";
  if (Status s = internal::WriteTextFile(dat, TimelineCsv(tl, ' ')); !s.ok()) return s;
  const size_t n = tl.tenants.size();
  std::ostringstream gp;
  gp << "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n  set terminal pngcairo size 1100,560"
        " font \"sans,10\"\n} else {\n  set terminal png size 1100,560\n}\n"
     << "set output \"" << (dir / "timeline.png").string() << "\"\n"
     << "set title \"" << run.workload << " / " << run.configuration
     << ": OK req/s per tenant, 429/s and gate fail-opens/s (paper time)\" noenhanced\n"
     << "set xlabel \"time (s)\"\nset ylabel \"per second\"\nset key outside right noenhanced\n"
     << "set tics out nomirror\nset yrange [0:*]\n";
  int tag = 1;
  for (const EventMetrics& e : m.events) {
    if (e.at_s < 0) continue;
    gp << "set arrow " << tag << " from " << Fixed(e.at_s, 3) << ", graph 0 to " << Fixed(e.at_s, 3)
       << ", graph 1 nohead dt 2 lc rgb \"#555555\"\n"
       << "set label " << tag << " \"" << GpText(e.text) << "\" at " << Fixed(e.at_s, 3)
       << ", graph 0.98 rotate by 90 right offset 1,0 font \",8\" noenhanced\n";
    ++tag;
    if (e.restore_s >= 0) {
      gp << "set arrow " << tag << " from " << Fixed(e.restore_s, 3) << ", graph 0 to "
         << Fixed(e.restore_s, 3) << ", graph 1 nohead dt 3 lc rgb \"#555555\"\n"
         << "set label " << tag << " \"restored\" at " << Fixed(e.restore_s, 3)
         << ", graph 0.98 rotate by 90 right offset 1,0 font \",8\"\n";
      ++tag;
    }
  }
  const std::string half = Fixed(tl.bucket_s / 2, 3);  // points at bucket centres
  gp << "plot ";
  std::string file = "\"";
  file.append(dat.string()).push_back('"');
  for (size_t i = 0; i < n; ++i) {
    gp << (i ? ", \\\n     " : "") << file << " using ($1+" << half << "):" << i + 2
       << " with lines lw 2 title \"" << GpText(tl.tenants[i]) << "\"";
  }
  gp << ", \\\n     " << file << " using ($1+" << half << "):" << n + 2
     << " with lines dt 2 lw 1.5 lc rgb \"#d62728\" title \"429/s\"";
  gp << ", \\\n     " << file << " using ($1+" << half << "):" << n + 8
     << " with impulses lw 2 lc rgb \"#ff9896\" title \"fail-opens/s\"";
  if (m.outside_responses > 0) {
    gp << ", \\\n     " << file << " using ($1+" << half << "):" << n + 4
       << " with lines dt 3 lw 1.5 lc rgb \"#7f7f7f\" title \"outside OK/s\"";
  }
  gp << "\n";
  if (Status s = internal::WriteTextFile(gp_path, gp.str()); !s.ok()) return s;
  internal::RunGnuplot(gp_path, options);
  return Status::Ok();
}

}  // namespace

Status WriteScenarioOutputs(const std::filesystem::path& dir, const RunMetrics& run,
                            const ScenarioMetrics& m, const ReportOptions& options) {
  if (Status s = internal::EnsureDir(dir); !s.ok()) return s;
  // summary.json (written by WriteRunOutputs) gains the "scenario" section.
  nlohmann::json summary = internal::RunMetricsJson(run);
  summary["scenario"] = ScenarioJson(m);
  const std::pair<const char*, std::string> files[] = {
      {"summary.json", summary.dump(2) + "\n"},
      {"timeline.csv", TimelineCsv(m.timeline, ',')},
      {"scenario.md", ScenarioMarkdown(run, m)},
  };
  for (const auto& [name, text] : files) {
    if (Status s = internal::WriteTextFile(dir / name, text); !s.ok()) return s;
  }
  if (!options.figures) return Status::Ok();
  return TimelineFigure(dir, run, m, options);
}

}  // namespace bp::loadgen
