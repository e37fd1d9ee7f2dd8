// Report files of loadgen: per run, per workload (aggregated over
// configurations and repeats) and across workloads (the comparison with the
// paper's numbers, SPEC section 7). Figures are drawn by writing a .dat and a
// .gp file and running gnuplot (pngcairo terminal, falling back to png) as a
// subprocess; when gnuplot is missing or fails, a warning is logged (spdlog)
// and the .dat/.gp files stay, the call still succeeds.
//
// Errors: a directory that cannot be created or a file that cannot be written
// gives a non-ok Status (kInternal, with the path); nothing throws.
// Thread-safety: the functions share no state, but two calls must not write
// into the same directory at the same time.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/records.h"
#include "bp/loadgen/scenario_metrics.h"
#include "bp/status.h"

namespace bp::loadgen {

struct ReportOptions {
  bool figures = true;              // false: write no .dat/.gp/.png at all
  std::string gnuplot = "gnuplot";  // program name (looked up in PATH) or path
};

// Writes one run's outputs into dir (created with parents if missing):
//   summary.json   every field of RunMetrics (tenants, classes, heatmap)
//   activities.csv one row per activity (header + records.activities.size())
//   attempts.csv   one row per HTTP attempt (header + records.attempts.size())
//   table.md       Table III-like headline row, per-class throughput and
//                  latency, per-tenant achievement
//   heatmap.dat, heatmap.gp, heatmap.png   per-tenant service over time (Fig. 4)
// CSV times are paper milliseconds since run start (-1 kept for "never").
Status WriteRunOutputs(const std::filesystem::path& dir, const RunRecords& records,
                       const RunMetrics& metrics, const ReportOptions& options = {});

// A scenario run's extra outputs, after WriteRunOutputs into the same dir:
//   summary.json   rewritten with a "scenario" section: gate_fail_opens,
//                  workflows started/completed, cancelled activities, the
//                  outside client's counts, and per event its window metrics
//                  (scenario_metrics.h) before and after, time to fair share
//   timeline.csv   per paper second: OK req/s per tenant, 429/s, responses/s,
//                  outside OK and 429/s, gate admits/defers/fail-opens per s
//   scenario.md    the per-event table
//   timeline.dat, timeline.gp, timeline.png   one line per tenant, 429/s and
//                  fail-opens/s, event times marked with dashed lines
Status WriteScenarioOutputs(const std::filesystem::path& dir, const RunMetrics& run,
                            const ScenarioMetrics& scenario, const ReportOptions& options = {});

// One configuration's metrics over its repeats: ScalarMetrics names with mean
// and 95 % Student-t interval (metrics.h, MeanCi95).
struct ConfigurationSummary {
  std::string configuration;
  int repeats = 0;
  std::vector<std::pair<std::string, MeanCi>> metrics;  // ScalarMetrics order
  // nullptr when no repeat reported the metric.
  const MeanCi* Find(const std::string& name) const;
};

struct WorkloadSummary {
  std::string workload;
  std::vector<ConfigurationSummary> configurations;  // first-seen order of runs
  const ConfigurationSummary* Find(const std::string& configuration) const;
};

// Groups runs by configuration (one workload expected; the first run's
// workload name is used) and aggregates each scalar metric over the repeats.
// A metric missing from some repeats is averaged over those that have it.
WorkloadSummary SummarizeWorkload(const std::vector<RunMetrics>& runs);

// Writes one workload's aggregate into dir:
//   summary.json    configuration -> metric -> {mean, ci95, stdev, n}
//   report.md       Table III-like row per configuration (429 share, DRF Jain,
//                   achievement-Jain, OK req/s, slot occupancy, mean +- CI) and
//                   per-class OK req/s and HTTP p50/p95/p99
//   throughput.dat/.gp/.png  per-class OK req/s bars per configuration with
//                   95 % CI error bars (Fig. 3)
//   heatmap_<configuration>.dat/.gp/.png  service heatmap of the first
//                   repeat of each configuration (Fig. 4)
//   ttft.dat/.gp/.png  only when some run had streamed 200 answers: time to
//                   first token (from the activity's first schedule, paper ms)
//                   per configuration and class, bar p95, whisker p50 to p99,
//                   means over repeats; report.md then also has a "Streamed
//                   calls per class" table (TTFT p50/p95/p99, HTTP TTFT p95,
//                   ITL p50/p95)
// Empty runs -> InvalidArgument.
Status WriteWorkloadReport(const std::filesystem::path& dir, const std::vector<RunMetrics>& runs,
                           const ReportOptions& options = {});

// The comparison table across workloads x configurations, shaped like SPEC
// section 7: one row per (workload, metric), one column per configuration,
// cells "measured +- ci95 (paper: value)". Workloads and configurations the
// paper has no number for show "-" for it. Configurations are naive, tn,
// litellm, bp, then any others in first-seen order.
std::string ComparisonMarkdown(const std::vector<WorkloadSummary>& workloads);

// Every ScalarMetrics name ComparisonMarkdown reads: the metrics of the paper's
// rows, of the rows for other workloads, and the failure row's counts; each
// once, in first-use order. "class.P<k>." names assume priority classes 1-3.
std::vector<std::string> ComparisonMetricNames();

// Writes comparison.md (ComparisonMarkdown) and comparison.json (every
// workload's summary) into dir.
Status WriteComparison(const std::filesystem::path& dir,
                       const std::vector<WorkloadSummary>& workloads);

// A short Markdown table of one run's headline numbers (for the console).
std::string RunTableMarkdown(const RunMetrics& metrics);

}  // namespace bp::loadgen
