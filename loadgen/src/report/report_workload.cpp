// One workload over configurations and repeats: SummarizeWorkload (mean and
// 95 % Student-t interval of every ScalarMetrics name) and
// WriteWorkloadReport (summary.json, report.md, Fig. 3 and Fig. 4 figures,
// and the time-to-first-token figure of a workload with streamed calls).
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "report_internal.h"

namespace bp::loadgen {

const MeanCi* ConfigurationSummary::Find(const std::string& name) const {
  for (const auto& [n, ci] : metrics) {
    if (n == name) return &ci;
  }
  return nullptr;
}

const ConfigurationSummary* WorkloadSummary::Find(const std::string& configuration) const {
  for (const ConfigurationSummary& c : configurations) {
    if (c.configuration == configuration) return &c;
  }
  return nullptr;
}

WorkloadSummary SummarizeWorkload(const std::vector<RunMetrics>& runs) {
  WorkloadSummary out;
  if (runs.empty()) return out;
  out.workload = runs.front().workload;
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RunMetrics*>> by_config;
  for (const RunMetrics& r : runs) {
    auto& list = by_config[r.configuration];
    if (list.empty()) order.push_back(r.configuration);
    list.push_back(&r);
  }
  for (const std::string& config : order) {
    ConfigurationSummary c;
    c.configuration = config;
    c.repeats = static_cast<int>(by_config[config].size());
    std::vector<std::string> names;  // first-seen order over the repeats
    std::map<std::string, std::vector<double>> samples;
    for (const RunMetrics* r : by_config[config]) {
      for (auto& [name, value] : ScalarMetrics(*r)) {
        auto& s = samples[name];
        if (s.empty()) names.push_back(name);
        s.push_back(value);
      }
    }
    for (const std::string& name : names) c.metrics.emplace_back(name, MeanCi95(samples[name]));
    out.configurations.push_back(std::move(c));
  }
  return out;
}

namespace {

using internal::MeanCiText;

std::string Cell(const ConfigurationSummary& c, const std::string& name, double scale,
                 int decimals) {
  const MeanCi* m = c.Find(name);
  return m ? MeanCiText(*m, scale, decimals) : "-";
}

std::set<int> ClassesOf(const WorkloadSummary& s) {
  std::set<int> classes;
  for (const ConfigurationSummary& c : s.configurations) {
    for (const auto& [name, ci] : c.metrics) {
      int k = 0;
      if (std::sscanf(name.c_str(), "class.P%d.", &k) == 1) classes.insert(k);
    }
  }
  return classes;
}

// Streamed calls per configuration and class (paper ms): TTFT from the
// activity's schedule, HTTP TTFT p95 and inter-token latency; "" when no
// configuration streamed (ScalarMetrics has no ttft names then).
std::string StreamMarkdown(const WorkloadSummary& s, bool figure) {
  std::ostringstream rows;
  for (const ConfigurationSummary& c : s.configurations) {
    for (int k : ClassesOf(s)) {
      const std::string p = "class.P" + std::to_string(k) + ".";
      if (c.Find(p + "ttft_p95_ms") == nullptr) continue;
      rows << "| " << c.configuration << " | P" << k << " | " << Cell(c, p + "ttft_p50_ms", 1, 0)
           << " | " << Cell(c, p + "ttft_p95_ms", 1, 0) << " | " << Cell(c, p + "ttft_p99_ms", 1, 0)
           << " | " << Cell(c, p + "http_ttft_p95_ms", 1, 0) << " | "
           << Cell(c, p + "itl_p50_ms", 1, 1) << " | " << Cell(c, p + "itl_p95_ms", 1, 1) << " |\n";
    }
  }
  if (rows.str().empty()) return "";
  return "\n## Streamed calls per class (ms)\n\nTTFT: the activity's first schedule to its "
         "first token (queue, gate and retries included); HTTP TTFT: the answer's send to its "
         "first token; ITL: each answer's mean gap between token events.\n\n"
         "| configuration | class | TTFT p50 | TTFT p95 | TTFT p99 | HTTP TTFT p95 | ITL p50 "
         "| ITL p95 |\n|---|---|---|---|---|---|---|---|\n" +
         rows.str() + (figure ? "\n![Time to first token per class](ttft.png)\n" : std::string());
}

std::string WorkloadMarkdown(const WorkloadSummary& s, const std::vector<std::string>& heatmaps,
                             bool figures) {
  std::ostringstream o;
  o << "# " << s.workload
    << "\n\nMean ± 95 % Student-t interval over repeats, paper units; "
       "rates over the contention window unless noted.\n\n"
    << "| configuration | repeats | 429 share (%) | proxy-local 429 (%) | DRF Jain "
       "| achievement-Jain | OK req/s (window) | mean OK req/s | slot ms / OK call "
       "| in-activity ms | window s | drain s "
       "|\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ConfigurationSummary& c : s.configurations) {
    o << "| " << c.configuration << " | " << c.repeats << " | " << Cell(c, "share_429", 100, 1)
      << " | " << Cell(c, "proxy_local_429_share", 100, 1) << " | " << Cell(c, "drf_jain", 1, 3)
      << " | " << Cell(c, "achievement_jain", 1, 3) << " | " << Cell(c, "ok_rps_window", 1, 1)
      << " | " << Cell(c, "mean_ok_rps", 1, 1) << " | " << Cell(c, "slot_ms_per_ok_call", 1, 0)
      << " | " << Cell(c, "in_activity_ms", 1, 0) << " | " << Cell(c, "contention_window_s", 1, 1)
      << " | " << Cell(c, "drain_span_s", 1, 1) << " |\n";
  }
  const std::set<int> classes = ClassesOf(s);
  o << "\n## OK throughput per class (req/s)\n\n| configuration |";
  for (int k : classes) o << " P" << k << " |";
  o << "\n|---|";
  for (size_t i = 0; i < classes.size(); ++i) o << "---|";
  o << "\n";
  for (const ConfigurationSummary& c : s.configurations) {
    o << "| " << c.configuration << " |";
    for (int k : classes)
      o << ' ' << Cell(c, "class.P" + std::to_string(k) + ".ok_rps", 1, 1) << " |";
    o << "\n";
  }
  o << "\n## Latency per class (ms; workflow completion in s)\n\n"
       "| configuration | class | HTTP p50 | HTTP p95 | HTTP p99 | end-to-end p95 "
       "| workflow mean s | slot ms / OK call |\n|---|---|---|---|---|---|---|---|\n";
  for (const ConfigurationSummary& c : s.configurations) {
    for (int k : classes) {
      const std::string p = "class.P" + std::to_string(k) + ".";
      o << "| " << c.configuration << " | P" << k << " | " << Cell(c, p + "http_p50_ms", 1, 0)
        << " | " << Cell(c, p + "http_p95_ms", 1, 0) << " | " << Cell(c, p + "http_p99_ms", 1, 0)
        << " | " << Cell(c, p + "end_to_end_p95_ms", 1, 0) << " | "
        << Cell(c, p + "workflow_mean_s", 1, 1) << " | " << Cell(c, p + "slot_ms_per_ok_call", 1, 0)
        << " |\n";
    }
  }
  o << "\n## Upstream 429s by bound dimension (% of upstream 429s)\n\n"
       "| configuration | requests | tokens |\n|---|---|---|\n";
  for (const ConfigurationSummary& c : s.configurations) {
    o << "| " << c.configuration << " | " << Cell(c, "share_429_requests_bound", 100, 0) << " | "
      << Cell(c, "share_429_tokens_bound", 100, 0) << " |\n";
  }
  o << StreamMarkdown(s, figures);
  if (figures) {
    o << "\n## Figures\n\n![OK throughput per class](throughput.png)\n";
    for (const std::string& h : heatmaps) o << "\n![" << h << "](" << h << ".png)\n";
  }
  return o.str();
}

}  // namespace

Status WriteWorkloadReport(const std::filesystem::path& dir, const std::vector<RunMetrics>& runs,
                           const ReportOptions& options) {
  if (runs.empty()) return Status::InvalidArgument("WriteWorkloadReport: no runs");
  if (Status s = internal::EnsureDir(dir); !s.ok()) return s;
  const WorkloadSummary summary = SummarizeWorkload(runs);

  // Heatmap of the lowest repeat of each configuration.
  std::map<std::string, const RunMetrics*> first;
  for (const RunMetrics& r : runs) {
    auto [it, inserted] = first.emplace(r.configuration, &r);
    if (!inserted && r.repeat < it->second->repeat) it->second = &r;
  }
  std::vector<std::string> heatmaps;
  if (options.figures) {
    for (const ConfigurationSummary& c : summary.configurations) {
      const RunMetrics* r = first[c.configuration];
      if (r->heatmap.tenants.empty()) continue;
      std::string stem = "heatmap_" + c.configuration;
      for (char& ch : stem) {
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
      }
      const std::string title = summary.workload + " / " + c.configuration +
                                ": service heatmap (repeat " + std::to_string(r->repeat) + ")";
      if (Status s = internal::HeatmapFigure(dir, stem, r->heatmap, title, options); !s.ok())
        return s;
      heatmaps.push_back(stem);
    }
    if (Status s = internal::ThroughputFigure(dir, "throughput", summary, options); !s.ok())
      return s;
    if (Status s = internal::TtftFigure(dir, "ttft", summary, options); !s.ok()) return s;
  }
  if (Status s = internal::WriteTextFile(dir / "summary.json",
                                         internal::WorkloadSummaryJson(summary).dump(2) + "\n");
      !s.ok()) {
    return s;
  }
  return internal::WriteTextFile(dir / "report.md",
                                 WorkloadMarkdown(summary, heatmaps, options.figures));
}

}  // namespace bp::loadgen
