// The report writers on the hand-made run: files exist, CSV row counts are
// exact, JSON fields are present, aggregates over repeats are exact.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bp/loadgen/report.h"
#include "metrics_fixture.h"
#include "test_output.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;

using testing::Slurp;

fs::path FreshDir(const std::string& name) { return testing::FreshOutputDir("metrics_report", name); }

size_t Lines(const fs::path& p) {
  const std::string text = Slurp(p);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

bool HaveGnuplot() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

TEST(ReportTest, RunOutputsWithoutGnuplotStillSucceed) {
  const fs::path dir = FreshDir("run_no_gnuplot");
  const RunRecords r = testing::HandMadeRun();
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot";
  ASSERT_TRUE(WriteRunOutputs(dir, r, ComputeRunMetrics(r), o).ok());
  EXPECT_EQ(Lines(dir / "activities.csv"), 1u + 6u);  // header + one row per activity
  EXPECT_EQ(Lines(dir / "attempts.csv"), 1u + 11u);   // header + one row per attempt
  EXPECT_TRUE(fs::exists(dir / "table.md"));
  EXPECT_TRUE(fs::exists(dir / "heatmap.gp"));
  EXPECT_TRUE(fs::exists(dir / "heatmap.dat"));
  EXPECT_FALSE(fs::exists(dir / "heatmap.png"));

  const nlohmann::json j = nlohmann::json::parse(Slurp(dir / "summary.json"));
  for (const char* key :
       {"share_429", "proxy_local_429_share", "achievement_jain", "drf_jain", "contention_window_s",
        "drain_span_s", "slot_ms_per_ok_call", "in_activity_ms", "mean_ok_rps",
        "upstream_429_by_bound", "http", "end_to_end", "tenants", "classes", "heatmap"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(j["share_429"].get<double>(), 4.0 / 9.0);
  EXPECT_EQ(j["tenants"].size(), 2u);
  EXPECT_EQ(j["classes"][0]["http"]["p95_ms"].get<double>(), 550);
  EXPECT_EQ(j["upstream_429_by_bound"]["requests"].get<int>(), 2);
}

TEST(ReportTest, ActivityCsvRowInPaperMilliseconds) {
  const fs::path dir = FreshDir("run_csv");
  const RunRecords r = testing::HandMadeRun();
  ReportOptions o;
  o.figures = false;
  ASSERT_TRUE(WriteRunOutputs(dir, r, ComputeRunMetrics(r), o).ok());
  std::istringstream csv(Slurp(dir / "activities.csv"));
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  // Activity 1: sent at 10 ms real = 20 paper ms, answered at 120, HTTP 100 ms.
  EXPECT_EQ(first,
            "1,1,a,1,1,0.000,20.000,120.000,140.000,100.000,140.000,0.000,120.000,1,1,0,100,20");
  EXPECT_FALSE(fs::exists(dir / "heatmap.gp"));
}

TEST(ReportTest, RunHeatmapPngWhenGnuplotIsInstalled) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = FreshDir("run_png");
  const RunRecords r = testing::HandMadeRun();
  ASSERT_TRUE(WriteRunOutputs(dir, r, ComputeRunMetrics(r)).ok());
  EXPECT_TRUE(fs::exists(dir / "heatmap.png"));
  EXPECT_GT(fs::file_size(dir / "heatmap.png"), 1000u);
}

// One tenant (overload, uncongested): gnuplot's image plot needs two rows,
// so the heatmap is drawn with boxes and gnuplot reports nothing.
TEST(ReportTest, OneTenantHeatmapRenders) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = FreshDir("run_png_one_tenant");
  RunRecords r = testing::HandMadeRun();
  r.workload = "overload";
  r.tenants.resize(1);
  auto other = [](const auto& x) { return x.tenant_index != 0; };
  std::erase_if(r.activities, other);
  std::erase_if(r.attempts, other);
  std::erase_if(r.slots_held, other);
  std::erase_if(r.workflows, other);
  ASSERT_TRUE(WriteRunOutputs(dir, r, ComputeRunMetrics(r)).ok());
  EXPECT_TRUE(fs::exists(dir / "heatmap.png"));
  EXPECT_GT(fs::file_size(dir / "heatmap.png"), 1000u);
  EXPECT_EQ(Slurp(dir / "heatmap.gp.log"), "");  // no warning, no error
}

std::vector<RunMetrics> TwoRepeatsTwoConfigs() {
  std::vector<RunMetrics> runs;
  for (const char* config : {"naive", "bp"}) {
    for (int repeat = 0; repeat < 2; ++repeat) {
      RunRecords r = testing::HandMadeRun();
      r.configuration = config;
      r.repeat = repeat;
      if (repeat == 1) r.attempts.push_back(testing::Attempt(6, 1, 700'000, 429, "requests"));
      runs.push_back(ComputeRunMetrics(r));
    }
  }
  return runs;
}

TEST(ReportTest, SummarizeWorkloadMeanAndCiOverRepeats) {
  const WorkloadSummary s = SummarizeWorkload(TwoRepeatsTwoConfigs());
  EXPECT_EQ(s.workload, "cross-priority");
  ASSERT_EQ(s.configurations.size(), 2u);
  EXPECT_EQ(s.configurations[0].configuration, "naive");
  const ConfigurationSummary* bp = s.Find("bp");
  ASSERT_NE(bp, nullptr);
  EXPECT_EQ(bp->repeats, 2);
  const MeanCi* share = bp->Find("share_429");
  ASSERT_NE(share, nullptr);
  // Repeats 4/9 and 5/10: mean 0.47222..., s = |a - b| / sqrt 2,
  // half width = t(1) * s / sqrt 2 = 12.7062 * |a - b| / 2.
  const double a = 4.0 / 9.0, b = 0.5;
  EXPECT_EQ(share->n, 2);
  EXPECT_NEAR(share->mean, (a + b) / 2, 1e-12);
  EXPECT_NEAR(share->half_width, 12.7062 * (b - a) / 2, 1e-12);
  const MeanCi* p1 = bp->Find("class.P1.ok_rps");
  ASSERT_NE(p1, nullptr);
  EXPECT_DOUBLE_EQ(p1->mean, 1.5);
  EXPECT_DOUBLE_EQ(p1->half_width, 0);
  EXPECT_EQ(bp->Find("no.such.metric"), nullptr);
}

TEST(ReportTest, WorkloadReportFiles) {
  const fs::path dir = FreshDir("workload");
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot";
  ASSERT_TRUE(WriteWorkloadReport(dir, TwoRepeatsTwoConfigs(), o).ok());
  for (const char* f : {"summary.json", "report.md", "throughput.dat", "throughput.gp",
                        "heatmap_naive.gp", "heatmap_bp.gp"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
  const nlohmann::json j = nlohmann::json::parse(Slurp(dir / "summary.json"));
  EXPECT_EQ(j["configurations"]["bp"]["repeats"].get<int>(), 2);
  EXPECT_TRUE(j["configurations"]["bp"]["metrics"].contains("drf_jain"));
  EXPECT_EQ(Lines(dir / "throughput.dat"), 1u + 2u);  // header + one line per configuration
  EXPECT_NE(Slurp(dir / "report.md").find("| bp | 2 | 47.2 ± 35.3 |"), std::string::npos);
}

TEST(ReportTest, ThroughputTitleNamesTheIntervalOnlyOverRepeats) {
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot";
  const fs::path two = FreshDir("title-two");
  ASSERT_TRUE(WriteWorkloadReport(two, TwoRepeatsTwoConfigs(), o).ok());
  EXPECT_NE(Slurp(two / "throughput.gp").find("(contention window, 95 % CI, 2 repeats)"),
            std::string::npos);
  // One repeat per configuration: no interval to draw, so the title claims none.
  std::vector<RunMetrics> one;
  for (const RunMetrics& m : TwoRepeatsTwoConfigs()) {
    if (m.repeat == 0) one.push_back(m);
  }
  const fs::path single = FreshDir("title-one");
  ASSERT_TRUE(WriteWorkloadReport(single, one, o).ok());
  const std::string gp = Slurp(single / "throughput.gp");
  EXPECT_NE(gp.find("(contention window, 1 repeat, no interval)"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("CI"), std::string::npos);
}

TEST(ReportTest, WorkloadReportWithNoRunsIsAnError) {
  const Status s = WriteWorkloadReport(FreshDir("empty"), {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(ReportTest, ComparisonPutsThePaperBesideTheMeasurement) {
  const std::vector<WorkloadSummary> w = {SummarizeWorkload(TwoRepeatsTwoConfigs())};
  const std::string md = ComparisonMarkdown(w);
  EXPECT_NE(md.find("| cross-priority | achievement-Jain |"), std::string::npos);
  EXPECT_NE(md.find("(paper 0.89)"), std::string::npos);
  EXPECT_NE(md.find("not run (paper 7.9/15.9/31.4)"), std::string::npos);  // litellm
  EXPECT_NE(md.find("1.5 ± 0.0 / 0.5 ± 0.0 / - (paper 21.3/18.5/11.8)"), std::string::npos);
  const fs::path dir = FreshDir("comparison");
  ASSERT_TRUE(WriteComparison(dir, w).ok());
  EXPECT_TRUE(fs::exists(dir / "comparison.md"));
  const nlohmann::json j = nlohmann::json::parse(Slurp(dir / "comparison.json"));
  EXPECT_EQ(j["workloads"].size(), 1u);
}

}  // namespace
}  // namespace bp::loadgen
