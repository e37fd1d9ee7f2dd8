// The comparison across workloads x configurations (SPEC section 7): the
// measured mean +- 95 % CI beside the paper's number for the same cell.
// Paper numbers: SPEC section 7, paper Table III, Table IV (ablations) and
// the text of section VI (overload slot occupancy, token-bound in-activity
// time and workflow completion, uncongested gate overhead).
#include <algorithm>
#include <map>
#include <sstream>

#include "report_internal.h"

namespace bp::loadgen {
namespace {

struct Part {
  const char* metric;  // ScalarMetrics name
  double scale;
  int decimals;
  const char* suffix;
};

struct PaperRow {
  const char* workload;
  const char* label;
  std::vector<Part> parts;
  std::map<std::string, std::string> paper;  // configuration -> paper's value
};

const Part kShare{"share_429", 100, 1, " %"};
const Part kDrf{"drf_jain", 1, 3, ""};
Part ClassRps(const char* metric) { return {metric, 1, 1, ""}; }

const std::vector<PaperRow>& PaperRows() {
  static const std::vector<PaperRow> rows = {
      {"cross-priority",
       "achievement-Jain",
       {{"achievement_jain", 1, 2, ""}},
       {{"naive", "0.60"}, {"litellm", "0.67"}, {"bp", "0.89"}, {"bp-no-priority", "0.839"}}},
      {"cross-priority",
       "OK req/s P1/P2/P3",
       {ClassRps("class.P1.ok_rps"), ClassRps("class.P2.ok_rps"), ClassRps("class.P3.ok_rps")},
       {{"naive", "8.4/17.4/34.8"},
        {"tn", "8.1/16.1/32.0"},
        {"litellm", "7.9/15.9/31.4"},
        {"bp", "21.3/18.5/11.8"}}},
      {"cross-priority",
       "429 share",
       {kShare},
       {{"naive", "23.2 %"}, {"tn", "3.1 %"}, {"litellm", "1.2 %"}, {"bp", "4.1 %"}}},
      {"cross-priority",
       "P1 HTTP p95 (ms)",
       {{"class.P1.http_p95_ms", 1, 0, ""}},
       {{"naive", "3506"}, {"tn", "3692"}, {"bp", "415"}}},
      {"cross-priority",
       "slot occupancy / OK call (ms)",
       {{"slot_ms_per_ok_call", 1, 0, ""}},
       {{"naive", "709"}, {"bp", "259"}}},
      {"cross-priority",
       "mean OK req/s",
       {{"mean_ok_rps", 1, 1, ""}},
       {{"naive", "55.5"}, {"litellm", "35.4"}, {"bp", "49.6"}}},
      {"overload", "429 share", {kShare}, {{"naive", "14.2 %"}, {"bp", "6.0 %"}}},
      {"overload",
       "slot occupancy / OK call (ms)",
       {{"slot_ms_per_ok_call", 1, 0, ""}},
       {{"naive", "412"}, {"bp", "224"}}},
      {"token-bound",
       "429 share / DRF Jain",
       {kShare, kDrf},
       {{"naive", "41.3 % / 0.889"},
        {"tn", "41.1 % / 0.888"},
        {"litellm", "17.2 % / 0.888"},
        {"bp", "6.1 % / 0.995"},
        {"bp-no-drf", "38.4 % / 0.959"},
        {"bp-no-priority", "3.2 % / 0.886"}}},
      {"token-bound",
       "OK req/s P1/P2/P3",
       {ClassRps("class.P1.ok_rps"), ClassRps("class.P2.ok_rps"), ClassRps("class.P3.ok_rps")},
       {{"naive", "~10 each"},
        {"tn", "~10 each"},
        {"litellm", "~10 each"},
        {"bp", "14.3/8.8/5.9"}}},
      {"token-bound",
       "in-activity time (ms)",
       {{"in_activity_ms", 1, 0, ""}},
       {{"naive", "1634"}, {"tn", "1677"}, {"litellm", "1452"}, {"bp", "211"}}},
      // The paper's "mean workflow completion" counts from the run's start
      // (metrics.h workflow_end_mean_s); a workflow's own start-to-end time
      // (workflow_mean_s, report.md) has no number in the paper.
      {"token-bound",
       "workflow completion since run start P1/P3 (s)",
       {{"class.P1.workflow_end_mean_s", 1, 1, ""}, {"class.P3.workflow_end_mean_s", 1, 1, ""}},
       {{"bp", "57.0/104.7"}}},
      {"request-bound",
       "429 share / DRF Jain",
       {kShare, kDrf},
       {{"naive", "22.6 % / 0.888"},
        {"tn", "2.9 % / 0.883"},
        {"litellm", "0.0 % / 0.887"},
        {"bp", "3.1 % / 0.990"}}},
      {"mixed-dominant",
       "429 share / DRF Jain",
       {kShare, kDrf},
       {{"naive", "32.8 % / 0.722"},
        {"tn", "24.2 % / 0.753"},
        {"litellm", "9.5 % / 0.694"},
        {"bp", "6.7 % / 0.996"}}},
      {"noisy-estimates",
       "429 share / DRF Jain",
       {kShare, kDrf},
       {{"naive", "52.6 % / 0.890"},
        {"tn", "52.5 % / 0.885"},
        {"litellm", "34.7 % / 0.889"},
        {"bp", "6.0 % / 0.986"}}},
      {"reservation",
       "429 share / DRF Jain",
       {kShare, kDrf},
       {{"naive", "52.4 % / 0.886"},
        {"tn", "52.0 % / 0.883"},
        {"litellm", "34.6 % / 0.892"},
        {"bp", "3.6 % / 0.996"}}},
      {"reservation-capped",
       "429 share / DRF Jain",
       {kShare, kDrf},
       {{"naive", "52.9 % / 0.881"},
        {"tn", "52.1 % / 0.893"},
        {"litellm", "29.2 % / 0.885"},
        {"bp", "3.6 % / 0.998"}}},
      {"uncongested",
       "in-activity time (ms)",
       {{"in_activity_ms", 1, 0, ""}},
       {{"naive", "172"}, {"litellm", "252"}, {"bp", "166"}}},
      {"uncongested",
       "HTTP p50 (ms)",
       {{"http.p50_ms", 1, 0, ""}},
       {{"naive", "201"}, {"bp", "184"}}},
  };
  return rows;
}

// Rows for a workload the paper has no row for.
std::vector<PaperRow> GenericRows() {
  return {{"", "429 share / DRF Jain", {kShare, kDrf}, {}},
          {"", "mean OK req/s", {{"mean_ok_rps", 1, 1, ""}}, {}},
          {"",
           "longest wait for a tenant's first OK call (s)",
           {{"max_first_ok_wait_s", 1, 2, ""}},
           {}}};
}

// Rows for a workload with streamed calls (ScalarMetrics' "stream.cut" is
// there): time to first token and inter-token latency per class.
std::vector<PaperRow> StreamRows() {
  auto p95 = [](const char* metric) { return Part{metric, 1, 0, ""}; };
  return {{"",
           "streamed: TTFT p95 P1/P2/P3 (ms, from schedule)",
           {p95("class.P1.ttft_p95_ms"), p95("class.P2.ttft_p95_ms"), p95("class.P3.ttft_p95_ms")},
           {}},
          {"",
           "streamed: ITL p95 P1/P2/P3 (ms)",
           {p95("class.P1.itl_p95_ms"), p95("class.P2.itl_p95_ms"), p95("class.P3.itl_p95_ms")},
           {}}};
}
constexpr const char* kStreamed = "stream.cut";

// The failure row's counts (ScalarMetrics names).
constexpr const char* kFailedCalls = "failed_calls";
constexpr const char* kUnfinished = "unfinished_activities";
constexpr const char* kNeverServed = "tenants_never_served";

double MeanOf(const ConfigurationSummary& c, const std::string& name) {
  const MeanCi* m = c.Find(name);
  return m ? m->mean : 0.0;
}

bool HasFailures(const ConfigurationSummary& c) {
  return MeanOf(c, kFailedCalls) > 0 || MeanOf(c, kUnfinished) > 0 || MeanOf(c, kNeverServed) > 0;
}

// "12 failed (gate_reject 12: big-a 12) / 0 unfinished / 0 never served",
// means over repeats; "" when the configuration did not run.
std::string FailureCell(const ConfigurationSummary* c) {
  if (c == nullptr) return "";
  std::ostringstream o;
  const MeanCi* failed = c->Find(kFailedCalls);
  o << (failed ? internal::MeanCiText(*failed, 1, 1) : std::string("-")) << " failed";
  std::string causes;
  for (const auto& [name, ci] : c->metrics) {
    if (name.rfind("failed.", 0) != 0) continue;
    const std::string cause = name.substr(7);
    std::string tenants;
    for (const auto& [tname, tci] : c->metrics) {  // tenant.<id>.failed.<cause>
      const std::string suffix = ".failed." + cause;
      if (tname.rfind("tenant.", 0) != 0 || tname.size() <= suffix.size() + 7 ||
          tname.compare(tname.size() - suffix.size(), suffix.size(), suffix) != 0) {
        continue;
      }
      tenants += (tenants.empty() ? ": " : ", ") +
                 tname.substr(7, tname.size() - 7 - suffix.size()) + " " +
                 internal::Fixed(tci.mean, 1);
    }
    causes += (causes.empty() ? "" : "; ") + cause + " " + internal::Fixed(ci.mean, 1) + tenants;
  }
  if (!causes.empty()) o << " (" << causes << ")";
  o << " / " << internal::Fixed(MeanOf(*c, kUnfinished), 1) << " unfinished / "
    << internal::Fixed(MeanOf(*c, kNeverServed), 1) << " never served";
  return o.str();
}

std::vector<std::string> Columns(const std::vector<WorkloadSummary>& workloads) {
  std::vector<std::string> cols = {"naive", "tn", "litellm", "bp"};
  for (const WorkloadSummary& w : workloads) {
    for (const ConfigurationSummary& c : w.configurations) {
      if (std::find(cols.begin(), cols.end(), c.configuration) == cols.end()) {
        cols.push_back(c.configuration);
      }
    }
  }
  return cols;
}

// "8.1 ± 0.2 / 16.0 ± 0.4" or "" when the configuration did not run.
std::string Measured(const ConfigurationSummary* c, const std::vector<Part>& parts) {
  if (c == nullptr) return "";
  std::string out;
  for (const Part& p : parts) {
    const MeanCi* m = c->Find(p.metric);
    if (!out.empty()) out += " / ";
    out += m ? internal::MeanCiText(*m, p.scale, p.decimals) + p.suffix : "-";
  }
  return out;
}

}  // namespace

std::vector<std::string> ComparisonMetricNames() {
  std::vector<std::string> names = {kFailedCalls, kUnfinished, kNeverServed, kStreamed};
  auto add = [&names](const std::vector<PaperRow>& rows) {
    for (const PaperRow& r : rows) {
      for (const Part& p : r.parts) {
        if (std::find(names.begin(), names.end(), p.metric) == names.end()) {
          names.push_back(p.metric);
        }
      }
    }
  };
  add(PaperRows());
  add(GenericRows());
  add(StreamRows());
  return names;
}

std::string ComparisonMarkdown(const std::vector<WorkloadSummary>& workloads) {
  const std::vector<std::string> cols = Columns(workloads);
  std::ostringstream o;
  o << "| workload | metric |";
  for (const std::string& c : cols) o << ' ' << c << " |";
  o << "\n|---|---|";
  for (size_t i = 0; i < cols.size(); ++i) o << "---|";
  o << "\n";
  for (const WorkloadSummary& w : workloads) {
    std::vector<PaperRow> rows;
    for (const PaperRow& r : PaperRows()) {
      if (w.workload == r.workload) rows.push_back(r);
    }
    if (rows.empty()) rows = GenericRows();
    bool streamed = false;
    for (const ConfigurationSummary& c : w.configurations) streamed = streamed || c.Find(kStreamed);
    if (streamed) {
      for (const PaperRow& r : StreamRows()) rows.push_back(r);
    }
    bool failures = false;
    for (const ConfigurationSummary& c : w.configurations) failures = failures || HasFailures(c);
    if (failures) {  // first, so a reader sees it before the rates
      o << "| " << w.workload << " | **failed / unfinished activities** (by cause: tenant) |";
      for (const std::string& col : cols) {
        const std::string cell = FailureCell(w.Find(col));
        o << ' ' << (cell.empty() ? "-" : cell) << " |";
      }
      o << "\n";
    }
    for (const PaperRow& r : rows) {
      o << "| " << w.workload << " | " << r.label << " |";
      for (const std::string& col : cols) {
        std::string cell = Measured(w.Find(col), r.parts);
        const auto paper = r.paper.find(col);
        if (paper != r.paper.end()) {
          cell += (cell.empty() ? "not run" : "") + std::string(" (paper ") + paper->second + ")";
        }
        o << ' ' << (cell.empty() ? "-" : cell) << " |";
      }
      o << "\n";
    }
  }
  return o.str();
}

Status WriteComparison(const std::filesystem::path& dir,
                       const std::vector<WorkloadSummary>& workloads) {
  if (Status s = internal::EnsureDir(dir); !s.ok()) return s;
  const std::string md =
      "# Measured vs paper\n\nMeasured: mean ± 95 % Student-t interval over repeats, paper units. "
      "In parentheses: the paper's number (SPEC section 7, Tables III and IV, section VI).\n\n" +
      ComparisonMarkdown(workloads);
  if (Status s = internal::WriteTextFile(dir / "comparison.md", md); !s.ok()) return s;
  nlohmann::json j = {{"workloads", nlohmann::json::array()}};
  for (const WorkloadSummary& w : workloads)
    j["workloads"].push_back(internal::WorkloadSummaryJson(w));
  return internal::WriteTextFile(dir / "comparison.json", j.dump(2) + "\n");
}

}  // namespace bp::loadgen
