// Helpers shared by the report sources (not part of the public API):
// file writing, number formatting, JSON views of the metrics, and the
// gnuplot figures (figures.cpp).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/report.h"
#include "bp/status.h"

namespace bp::loadgen::internal {

// Creates dir and its parents; Internal with the path on failure.
Status EnsureDir(const std::filesystem::path& dir);
// Writes (truncates) a text file; Internal with the path on failure.
Status WriteTextFile(const std::filesystem::path& path, const std::string& text);

// printf("%.*f"); non-finite values print as "nan".
std::string Fixed(double v, int decimals);
// "12.3 ± 0.4" (no "±" part when n < 2), values multiplied by scale first.
std::string MeanCiText(const MeanCi& m, double scale, int decimals);

nlohmann::json RunMetricsJson(const RunMetrics& m);
nlohmann::json WorkloadSummaryJson(const WorkloadSummary& s);

// Figures: write <stem>.dat and <stem>.gp into dir and run gnuplot to make
// <stem>.png. Only file errors are returned; gnuplot trouble is a warning.
Status HeatmapFigure(const std::filesystem::path& dir, const std::string& stem,
                     const ServiceHeatmap& heatmap, const std::string& title,
                     const ReportOptions& options);
Status ThroughputFigure(const std::filesystem::path& dir, const std::string& stem,
                        const WorkloadSummary& summary, const ReportOptions& options);
// Time to first token per configuration and class from the summary's
// class.P<k>.ttft_{p50,p95,p99}_ms: <stem>.dat holds one row per
// configuration, "name" then p50 p95 p99 per class (paper ms, 1 decimal, "-"
// where the class had no streamed answer); the figure draws p95 as the bar
// and p50..p99 as its whisker. Writes nothing when no run streamed.
Status TtftFigure(const std::filesystem::path& dir, const std::string& stem,
                  const WorkloadSummary& summary, const ReportOptions& options);

// Runs `gnuplot script` with output to script + ".log"; false (and a logged
// warning) when gnuplot is missing or exits non-zero.
bool RunGnuplot(const std::filesystem::path& script, const ReportOptions& options);

}  // namespace bp::loadgen::internal
