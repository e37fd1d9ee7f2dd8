// Failed activities in the metrics and reports, on the hand-made
// run of metrics_fixture.h plus a tenant c whose every call was REJECTed by
// the gate early on. Values follow by hand (speedup 2: paper = 2 x real).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/report.h"
#include "metrics_fixture.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;

// HandMadeRun plus tenant c (P1): 3 activities, all failed with
// "gate_reject" at 0.10, 0.20, 0.25 s real; c finished at 0.25 s real.
RunRecords RunWithRejectedTenant() {
  RunRecords r = testing::HandMadeRun();
  r.tenants.push_back({"c", 1, 1.0, 0.6, 3, 0, 250'000});
  for (int i = 0; i < 3; ++i) {
    const int64_t done = i == 2 ? 250'000 : 100'000 * (i + 1);
    ActivityRecord a = testing::Activity(7 + i, 4 + i, 2, 0, -1, -1, done, false, 2000, 0);
    a.fail_cause = "gate_reject";
    r.activities.push_back(a);
  }
  return r;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FailureMetricsTest, AFailedTenantDoesNotEndTheContentionWindow) {
  const RunMetrics m = ComputeRunMetrics(RunWithRejectedTenant());
  // c's last completion (0.25 s real) failed: a's finish at 1.0 s real ends it.
  EXPECT_DOUBLE_EQ(m.contention_window_s, 2.0);
  EXPECT_DOUBLE_EQ(m.tenants[0].ok_rps, 1.5);  // a: 3 OK calls in 2 paper s, as without c
  EXPECT_DOUBLE_EQ(m.tenants[2].ok_rps, 0);
  EXPECT_DOUBLE_EQ(m.tenants[2].achievement, 0);  // c is still a queue with work
  // The same records with c's last call OK: then c ends the window at 0.25 s real.
  RunRecords r = RunWithRejectedTenant();
  r.activities.back().ok = true;
  r.activities.back().fail_cause.clear();
  r.activities.back().final_answer_us = 250'000;
  EXPECT_DOUBLE_EQ(ComputeRunMetrics(r).contention_window_s, 0.5);
}

TEST(FailureMetricsTest, FailuresPerTenantAndCauseUnfinishedAndFirstOk) {
  RunRecords r = RunWithRejectedTenant();
  // a: 3 records completed, 1 scheduled and never completed, 1 never started
  r.tenants[0].total_activities = 5;
  ActivityRecord pending;
  pending.id = 99;
  pending.tenant_index = 0;
  pending.scheduled_us = 300'000;
  r.activities.push_back(pending);
  const RunMetrics m = ComputeRunMetrics(r);
  EXPECT_EQ(m.failed_calls, 4);  // b's given-up call + c's 3 REJECTs
  EXPECT_EQ(m.failed_by_cause, (std::map<std::string, int64_t>{{"failed", 1}, {"gate_reject", 3}}));
  EXPECT_EQ(m.tenants[2].failed_calls, 3);
  EXPECT_EQ(m.tenants[2].failed_by_cause.at("gate_reject"), 3);
  EXPECT_EQ(m.tenants[1].failed_by_cause.at("failed"), 1);
  EXPECT_EQ(m.tenants[0].failed_calls, 0);
  EXPECT_EQ(m.tenants[0].unfinished, 1);   // scheduled, never completed
  EXPECT_EQ(m.tenants[0].not_started, 1);  // 5 - 4 recorded
  EXPECT_EQ(m.unfinished_activities, 1);
  EXPECT_EQ(m.not_started_activities, 1);
  // First OK answer: a at 60 ms real = 0.12 paper s, b at 520 ms = 1.04 s; c never.
  EXPECT_DOUBLE_EQ(m.tenants[0].first_ok_wait_s, 0.12);
  EXPECT_DOUBLE_EQ(m.tenants[1].first_ok_wait_s, 1.04);
  EXPECT_DOUBLE_EQ(m.tenants[2].first_ok_wait_s, -1);
  EXPECT_DOUBLE_EQ(m.max_first_ok_wait_s, 1.04);
  EXPECT_EQ(m.tenants_never_served, 1);
  std::map<std::string, double> s;
  for (const auto& [name, v] : ScalarMetrics(m)) s[name] = v;
  EXPECT_EQ(s.at("failed_calls"), 4);
  EXPECT_EQ(s.at("failed.gate_reject"), 3);
  EXPECT_EQ(s.at("tenant.c.failed.gate_reject"), 3);
  EXPECT_EQ(s.at("unfinished_activities"), 1);
  EXPECT_EQ(s.at("tenants_never_served"), 1);
  EXPECT_EQ(s.count("tenant.c.first_ok_wait_s"), 0u);
}

TEST(FailureMetricsTest, ReportsSayItFirstAndPerTenant) {
  const fs::path dir = fs::path(BP_BINARY_DIR) / "test-output" / "metrics_failure" / "run";
  fs::remove_all(dir);
  const RunRecords r = RunWithRejectedTenant();
  const RunMetrics m = ComputeRunMetrics(r);
  ReportOptions o;
  o.figures = false;
  ASSERT_TRUE(WriteRunOutputs(dir, r, m, o).ok());
  const std::string table = Slurp(dir / "table.md");
  // The third line (after the title and a blank line) is the notice.
  std::istringstream lines(table);
  std::string title, blank, notice;
  std::getline(lines, title);
  std::getline(lines, blank);
  std::getline(lines, notice);
  EXPECT_EQ(notice.rfind("**Incomplete run:** 4 failed activities (failed 1, gate_reject 3), "
                         "0 unfinished, 1 tenant(s) never served. Per tenant: b (failed 1: "
                         "failed 1; unfinished 0) c (failed 3: gate_reject 3; unfinished 0; "
                         "never served).",
                         0),
            0u)
      << notice;
  EXPECT_NE(table.find("| c | P1 | 0.60 | 0 | 0.00 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| never | 3 (gate_reject 3) | 0 |"), std::string::npos) << table;
  const auto j = nlohmann::json::parse(Slurp(dir / "summary.json"));
  EXPECT_EQ(j["failed_by_cause"]["gate_reject"].get<int>(), 3);
  EXPECT_EQ(j["tenants_never_served"].get<int>(), 1);
  EXPECT_EQ(j["tenants"][2]["failed_by_cause"]["gate_reject"].get<int>(), 3);
  EXPECT_EQ(j["tenants"][2]["first_ok_wait_s"].get<double>(), -1);

  // The comparison: a failure row first for this workload, with cause and tenant.
  const std::string md = ComparisonMarkdown({SummarizeWorkload({m})});
  const auto row = md.find(
      "| cross-priority | **failed / unfinished activities** (by cause: "
      "tenant) | - | - | - | 4.0 failed (failed 1.0: b 1.0; gate_reject "
      "3.0: c 3.0) / 0.0 unfinished / 1.0 never served |");
  EXPECT_NE(row, std::string::npos) << md;
  EXPECT_LT(row, md.find("| cross-priority | achievement-Jain |"));
}

TEST(FailureMetricsTest, ACleanRunHasNoNoticeAndNoFailureRow) {
  RunRecords r = testing::HandMadeRun();
  r.activities.pop_back();  // drop b's given-up call
  r.tenants[1].total_activities = 2;
  const RunMetrics m = ComputeRunMetrics(r);
  EXPECT_EQ(m.failed_calls, 0);
  EXPECT_EQ(m.unfinished_activities, 0);
  const std::string md = ComparisonMarkdown({SummarizeWorkload({m})});
  EXPECT_EQ(md.find("failed / unfinished"), std::string::npos) << md;
  const fs::path dir = fs::path(BP_BINARY_DIR) / "test-output" / "metrics_failure" / "clean";
  fs::remove_all(dir);
  ReportOptions o;
  o.figures = false;
  ASSERT_TRUE(WriteRunOutputs(dir, r, m, o).ok());
  EXPECT_EQ(Slurp(dir / "table.md").find("Incomplete run"), std::string::npos);
}

// A run whose tenants had more work than the run (a scenario, or a run
// stopped at its length cap): work never scheduled is a note, not an
// "Incomplete run", and it is not counted as unfinished.
TEST(FailureMetricsTest, WorkNeverStartedIsANoteNotAFailure) {
  RunRecords r = testing::HandMadeRun();
  r.activities.pop_back();  // drop b's given-up call: every recorded call OK
  r.tenants[0].total_activities = 100000;
  r.tenants[1].total_activities = 2;
  const RunMetrics m = ComputeRunMetrics(r);
  EXPECT_EQ(m.unfinished_activities, 0);
  EXPECT_EQ(m.not_started_activities, 100000 - m.tenants[0].ok_calls);
  const fs::path dir = fs::path(BP_BINARY_DIR) / "test-output" / "metrics_failure" / "capped";
  fs::remove_all(dir);
  ReportOptions o;
  o.figures = false;
  ASSERT_TRUE(WriteRunOutputs(dir, r, m, o).ok());
  const std::string table = Slurp(dir / "table.md");
  EXPECT_EQ(table.find("Incomplete run"), std::string::npos) << table;
  EXPECT_NE(table.find("Stopped before all work was scheduled: " +
                       std::to_string(m.not_started_activities) + " activities never started"),
            std::string::npos)
      << table;
  const auto j = nlohmann::json::parse(Slurp(dir / "summary.json"));
  EXPECT_EQ(j["not_started_activities"].get<int64_t>(), m.not_started_activities);
}

}  // namespace
}  // namespace bp::loadgen
