// The workload report and the comparison for streamed calls, from exact
// synthetic records: the time-to-first-token figure's data file, report.md's
// streamed table, the comparison's TTFT and ITL rows and the run summary's
// stream sections; nothing of the kind for a workload that did not stream.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bp/loadgen/report.h"
#include "metrics_fixture.h"
#include "test_output.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;
using testing::StreamRun;

using testing::Slurp;

fs::path FreshDir(const std::string& name) { return testing::FreshOutputDir("stream_report", name); }

// naive: one repeat of the base timings. bp: the base and a repeat with
// every first token twice as late.
//   naive P1 TTFT paper ms {260, 520}: p50 390, p95 260 + 0.95 x 260 = 507,
//         p99 260 + 0.99 x 260 = 517.4; P2 {10}
//   bp r1 P1 {320, 540}: p50 430, p95 320 + 0.95 x 220 = 529, p99 537.8; P2 {20}
//   bp means: P1 410 / 518 / 527.6, P2 15
std::vector<RunMetrics> StreamRuns() {
  return {ComputeRunMetrics(StreamRun("naive", 0, 1)), ComputeRunMetrics(StreamRun("bp", 0, 1)),
          ComputeRunMetrics(StreamRun("bp", 1, 2))};
}

TEST(StreamReport, TtftFigureDataIsP50P95P99PerClassAndConfiguration) {
  const fs::path dir = FreshDir("ttft");
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot";
  ASSERT_TRUE(WriteWorkloadReport(dir, StreamRuns(), o).ok());
  ASSERT_TRUE(fs::exists(dir / "ttft.gp"));
  EXPECT_EQ(Slurp(dir / "ttft.dat"),
            "# configuration then per class: ttft_p50_ms ttft_p95_ms ttft_p99_ms (paper ms from "
            "the activity's first schedule, mean over repeats; - none streamed)\n"
            "\"naive\" 390.0 507.0 517.4 10.0 10.0 10.0\n"
            "\"bp\" 410.0 518.0 527.6 15.0 15.0 15.0\n");
  const std::string gp = Slurp(dir / "ttft.gp");
  // Bar p95 (column 3 for P1, 6 for P2), whisker p50 to p99.
  EXPECT_NE(gp.find("using 3:2:4:xtic(1) title \"P1\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("using 6:5:7 title \"P2\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("(bar p95, whisker p50 to p99; mean of 2 repeats)"), std::string::npos) << gp;
}

// gnuplot draws the figure from the script without a warning or an error.
TEST(StreamReport, TtftPngWhenGnuplotIsInstalled) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot not installed";
  }
  const fs::path dir = FreshDir("ttft_png");
  ASSERT_TRUE(WriteWorkloadReport(dir, StreamRuns()).ok());
  EXPECT_GT(fs::file_size(dir / "ttft.png"), 1000u);
  EXPECT_EQ(Slurp(dir / "ttft.gp.log"), "");
}

TEST(StreamReport, ReportTableHasTtftHttpTtftAndItlPerClass) {
  const fs::path dir = FreshDir("table");
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot";
  ASSERT_TRUE(WriteWorkloadReport(dir, StreamRuns(), o).ok());
  const std::string md = Slurp(dir / "report.md");
  // naive P1: HTTP TTFT {60, 20} paper ms, p95 20 + 0.95 x 40 = 58; ITL {4}.
  EXPECT_NE(md.find("| naive | P1 | 390 | 507 | 517 | 58 | 4.0 | 4.0 |"), std::string::npos) << md;
  // bp P2 over two repeats {10, 20}: 15 +- 12.7062 x 5 = 63.5; ITL 2 in both.
  EXPECT_NE(md.find("| bp | P2 | 15 ± 64 | 15 ± 64 | 15 ± 64 | 15 ± 64 | 2.0 ± 0.0 | 2.0 ± 0.0 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("![Time to first token per class](ttft.png)"), std::string::npos);
}

TEST(StreamReport, ComparisonShowsTtftP95AndItlPerClass) {
  const std::string md = ComparisonMarkdown({SummarizeWorkload(StreamRuns())});
  // Columns naive | tn | litellm | bp; P3 had no streamed answer.
  EXPECT_NE(md.find("| token-bound-streaming | streamed: TTFT p95 P1/P2/P3 (ms, from schedule) "
                    "| 507 / 10 / - | - | - | 518 ± 140 / 15 ± 64 / - |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| token-bound-streaming | streamed: ITL p95 P1/P2/P3 (ms) "
                    "| 4 / 2 / - | - | - | 4 ± 0 / 2 ± 0 / - |"),
            std::string::npos)
      << md;
}

TEST(StreamReport, RunSummaryJsonHasTheStreamSections) {
  const fs::path dir = FreshDir("run");
  ReportOptions o;
  o.figures = false;
  const RunRecords r = StreamRun("bp", 0, 1);
  ASSERT_TRUE(WriteRunOutputs(dir, r, ComputeRunMetrics(r), o).ok());
  const nlohmann::json j = nlohmann::json::parse(Slurp(dir / "summary.json"));
  EXPECT_EQ(j["stream"]["streamed"].get<int>(), 3);
  EXPECT_EQ(j["stream"]["cut"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(j["stream"]["ttft"]["mean_ms"].get<double>(), (260.0 + 520 + 10) / 3);
  EXPECT_DOUBLE_EQ(j["classes"][0]["stream"]["ttft"]["p95_ms"].get<double>(), 507);
  EXPECT_DOUBLE_EQ(j["classes"][0]["stream"]["http_ttft"]["p95_ms"].get<double>(), 58);
  EXPECT_EQ(j["tenants"][1]["stream"]["itl"]["count"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(j["tenants"][1]["stream"]["itl"]["p50_ms"].get<double>(), 2);
}

// Speedup 2: paper ms = 2 x real ms (StreamRun). The 429 is a plain answer to
// a streamed request; the last row a plain call.
TEST(StreamReport, AttemptsCsvHasEachAttemptsStreamColumns) {
  const fs::path dir = FreshDir("attempts");
  ReportOptions o;
  o.figures = false;
  RunRecords r = StreamRun("bp", 0, 1, /*plain_answer=*/true);
  r.attempts[0].token_events = 12;
  r.attempts[1].stream = 0;
  r.attempts[1].bound = "requests";
  r.attempts[2].token_events = 3;  // cut after 3
  r.attempts[3].token_events = 12;
  ASSERT_TRUE(WriteRunOutputs(dir, r, ComputeRunMetrics(r), o).ok());
  EXPECT_EQ(Slurp(dir / "attempts.csv"),
            "activity_id,tenant,priority,send_ms,done_ms,latency_ms,status,proxy_local,bound,"
            "streamed,cut_short,ttft_ms,itl_ms,token_events\n"
            "0,a,1,200.000,400.000,200.000,200,0,,1,0,60.000,4.000,12\n"
            "1,a,1,120.000,320.000,200.000,429,0,requests,0,0,,,0\n"
            "1,a,1,600.000,800.000,200.000,200,0,,1,1,20.000,,3\n"
            "2,b,2,0.000,200.000,200.000,200,0,,1,0,10.000,2.000,12\n"
            "2,b,2,0.000,200.000,200.000,200,0,,0,0,,,0\n");
}

TEST(StreamReport, AWorkloadWithoutStreamsHasNoTtftFigureTableOrRows) {
  std::vector<RunRecords> records;
  std::vector<RunMetrics> runs;
  for (const char* config : {"naive", "bp"}) {
    RunRecords r = StreamRun(config, 0, 1);
    r.workload = "token-bound";
    for (AttemptRecord& a : r.attempts) {
      a.stream = 0;
      a.ttft_us = -1;
      a.itl_us = -1;
    }
    runs.push_back(ComputeRunMetrics(r));
    records.push_back(std::move(r));
  }
  const fs::path dir = FreshDir("plain");
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot";
  ASSERT_TRUE(WriteWorkloadReport(dir, runs, o).ok());
  EXPECT_TRUE(fs::exists(dir / "throughput.dat"));
  EXPECT_FALSE(fs::exists(dir / "ttft.dat"));
  EXPECT_FALSE(fs::exists(dir / "ttft.gp"));
  EXPECT_EQ(Slurp(dir / "report.md").find("Streamed calls"), std::string::npos);
  EXPECT_EQ(ComparisonMarkdown({SummarizeWorkload(runs)}).find("streamed:"), std::string::npos);
  ASSERT_TRUE(WriteRunOutputs(dir / "run", records[0], runs[0], o).ok());
  const nlohmann::json j = nlohmann::json::parse(Slurp(dir / "run" / "summary.json"));
  EXPECT_FALSE(j.contains("stream"));
  EXPECT_FALSE(j["classes"][0].contains("stream"));
}

}  // namespace
}  // namespace bp::loadgen
