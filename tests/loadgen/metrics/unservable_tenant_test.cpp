// Tenants none of whose calls can ever be served (Workload::Unservable,
// TenantInfo::unservable) are reported apart and left out of fairness; long
// tenant lists in table.md's first lines are summarised; the run's summary
// names the causes of gate fail-opens. Hand-made records, speedup 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/report.h"
#include "bp/loadgen/workload.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kMs = 1000;  // one millisecond in us

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(UnservableTenant, AllCallsAboveTheLargestTheUpstreamServes) {
  Workload w;
  w.caps = {60, 1000, 60, 1000};  // the largest call: 60 requests, 1000 tokens
  TenantSpec small, large;
  small.prompt_tokens = 800;
  small.max_tokens = 200;  // 1000: fits exactly
  large.prompt_tokens = 900;
  large.max_tokens = 200;  // 1100 > 1000
  w.tenants = {small, large};
  EXPECT_FALSE(w.Unservable(0));
  EXPECT_TRUE(w.Unservable(1));
  EXPECT_FALSE(w.Unservable(2));  // no such tenant
  ScenarioEvent raise;            // limits that serve it later: it can be served
  raise.type = EventType::kUpstreamLimits;
  raise.caps = {60, 2000, 60, 2000};
  w.events.push_back(raise);
  EXPECT_FALSE(w.Unservable(1));
  w.events.clear();
  w.caps = {60, 0, 60, 0};  // no token limit: every call fits
  EXPECT_FALSE(w.Unservable(1));
  w.caps = {0.5, 0, 0.5, 0};  // a requests limit below one call
  EXPECT_TRUE(w.Unservable(0));
}

// Seven tenants on a 70 req/s cap; six get 10 OK calls each in the 1 s run,
// tenant "big" is unservable and every call of it was REJECTed. Counted with
// an entitlement, big would give Jain 36 / (7 x 6) = 0.857; apart, the six
// have 10 req/s of ideal each and Jain 1.
RunRecords SevenTenants() {
  RunRecords r;
  r.workload = "w";
  r.configuration = "bp";
  r.speedup = 1;
  r.cap_requests_per_s = 70;
  r.end_us = 1000 * kMs;
  for (int t = 0; t < 7; ++t) {
    TenantInfo info;
    info.id = t == 6 ? "big" : "t" + std::to_string(t);
    info.total_activities = 10;
    info.start_us = 0;
    info.finish_us = t == 6 ? 300 * kMs : 1000 * kMs;
    info.unservable = t == 6;
    r.tenants.push_back(info);
  }
  for (int t = 0; t < 7; ++t) {
    for (int k = 0; k < 10; ++k) {
      ActivityRecord a;
      a.id = static_cast<int64_t>(r.activities.size());
      a.tenant_index = t;
      a.prompt_tokens = 10;
      a.completed_us = (t == 6 ? 30 : 90 + 90 * k) * kMs;
      if (t == 6) {
        a.fail_cause = "gate_reject";
      } else {
        a.ok = true;
        a.first_send_us = a.completed_us - 50 * kMs;
        a.final_answer_us = a.completed_us;
      }
      r.activities.push_back(a);
    }
  }
  return r;
}

TEST(UnservableTenant, IsReportedApartAndLeftOutOfFairness) {
  RunRecords r = SevenTenants();
  const RunMetrics m = ComputeRunMetrics(r);
  EXPECT_EQ(m.tenants_unservable, 1);
  EXPECT_EQ(m.tenants_never_served, 0);  // apart from the never served
  EXPECT_TRUE(m.tenants[6].unservable);
  EXPECT_DOUBLE_EQ(m.tenants[6].ideal_rps, 0);
  EXPECT_DOUBLE_EQ(m.tenants[0].ideal_rps, 70.0 / 6);  // the cap over the six
  EXPECT_DOUBLE_EQ(m.achievement_jain, 1);
  EXPECT_DOUBLE_EQ(m.drf_jain, 1);
  std::map<std::string, double> s;
  for (const auto& [name, v] : ScalarMetrics(m)) s[name] = v;
  EXPECT_EQ(s.at("tenants_unservable"), 1);
  EXPECT_EQ(s.count("tenant.big.achievement"), 0u);
  EXPECT_EQ(s.count("tenant.t0.achievement"), 1u);
  // The same records without the flag: big is a queue with an entitlement.
  r.tenants[6].unservable = false;
  const RunMetrics counted = ComputeRunMetrics(r);
  EXPECT_NEAR(counted.achievement_jain, 36.0 / 42, 1e-12);
  EXPECT_EQ(counted.tenants_never_served, 1);
  // A flagged tenant that was served after all (limits raised mid-run) counts.
  r = SevenTenants();
  r.activities.back().ok = true;
  r.activities.back().final_answer_us = r.activities.back().completed_us;
  EXPECT_EQ(ComputeRunMetrics(r).tenants_unservable, 0);
}

TEST(UnservableTenant, TableNotesItAndSummaryMarksIt) {
  const RunRecords r = SevenTenants();
  const RunMetrics m = ComputeRunMetrics(r);
  const fs::path dir = fs::path(BP_BINARY_DIR) / "test-output" / "unservable" / "run";
  fs::remove_all(dir);
  ReportOptions o;
  o.figures = false;
  ASSERT_TRUE(WriteRunOutputs(dir, r, m, o).ok());
  const std::string table = Slurp(dir / "table.md");
  EXPECT_NE(table.find("Excluded from fairness: 1 tenant(s) whose every call is above the "
                       "largest call the upstream serves (big); no ideal share, not in the Jain "
                       "indexes, not counted as never served."),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| big | P1 | 1.00 | 0 | 0.00 | - | unservable |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("big (failed 10: gate_reject 10; unfinished 0; unservable)"),
            std::string::npos)
      << table;
  const auto j = nlohmann::json::parse(Slurp(dir / "summary.json"));
  EXPECT_EQ(j["tenants_unservable"].get<int>(), 1);
  EXPECT_TRUE(j["tenants"][6]["unservable"].get<bool>());
  EXPECT_FALSE(j["tenants"][0]["unservable"].get<bool>());
}

// 12 tenants whose work all failed: the notice lists five and counts the rest.
TEST(LongTenantLists, TheFirstLinesListFiveAndCountTheRest) {
  RunRecords r;
  r.workload = "w";
  r.configuration = "naive";
  r.speedup = 1;
  r.cap_requests_per_s = 10;
  r.end_us = 1000 * kMs;
  for (int t = 0; t < 12; ++t) {
    TenantInfo info;
    info.id = "tenant-" + std::to_string(t);
    info.total_activities = 1;
    info.unservable = true;
    r.tenants.push_back(info);
    ActivityRecord a;
    a.id = t;
    a.tenant_index = t;
    a.completed_us = 10 * kMs;
    a.fail_cause = "upstream_refused";
    r.activities.push_back(a);
  }
  const RunMetrics m = ComputeRunMetrics(r);
  const fs::path dir = fs::path(BP_BINARY_DIR) / "test-output" / "unservable" / "long";
  fs::remove_all(dir);
  ReportOptions o;
  o.figures = false;
  ASSERT_TRUE(WriteRunOutputs(dir, r, m, o).ok());
  std::istringstream lines(Slurp(dir / "table.md"));
  std::string title, blank, notice, blank2, note;
  std::getline(lines, title);
  std::getline(lines, blank);
  std::getline(lines, notice);
  std::getline(lines, blank2);
  std::getline(lines, note);
  EXPECT_EQ(notice,
            "**Incomplete run:** 12 failed activities (upstream_refused 12), 0 unfinished, 0 "
            "tenant(s) never served. Per tenant: tenant-0 (failed 1: upstream_refused 1; "
            "unfinished 0; unservable) tenant-1 (failed 1: upstream_refused 1; unfinished 0; "
            "unservable) tenant-2 (failed 1: upstream_refused 1; unfinished 0; unservable) "
            "tenant-3 (failed 1: upstream_refused 1; unfinished 0; unservable) tenant-4 (failed "
            "1: upstream_refused 1; unfinished 0; unservable) and 7 more. Fairness and rates "
            "below are over the contention window, which a tenant whose work ended in failures "
            "does not end.");
  EXPECT_EQ(note,
            "Excluded from fairness: 12 tenant(s) whose every call is above the largest call the "
            "upstream serves (tenant-0, tenant-1, tenant-2, tenant-3, tenant-4 and 7 more); no "
            "ideal share, not in the Jain indexes, not counted as never served.");
}

TEST(GateFailOpenCauses, SummaryAndTableNameThem) {
  RunRecords r = SevenTenants();
  r.gate_fail_opens = 7743;
  r.gate_fail_opens_unconfigured = 7740;
  r.gate_fail_opens_timed_out = 3;
  r.gate_reseeds = 2;
  r.gate_release_errors = 5;
  const RunMetrics m = ComputeRunMetrics(r);
  EXPECT_EQ(m.gate_fail_opens_by_cause,
            (std::map<std::string, uint64_t>{{"target not configured", 7740}, {"timed out", 3}}));
  const fs::path dir = fs::path(BP_BINARY_DIR) / "test-output" / "unservable" / "fail-open";
  fs::remove_all(dir);
  ReportOptions o;
  o.figures = false;
  ASSERT_TRUE(WriteRunOutputs(dir, r, m, o).ok());
  const std::string table = Slurp(dir / "table.md");
  EXPECT_NE(table.find("Gate fail-opens: 7743 (target not configured 7740, timed out 3); "
                       "re-seeds of the target: 2; failed releases: 5."),
            std::string::npos)
      << table;
  const auto j = nlohmann::json::parse(Slurp(dir / "summary.json"));
  EXPECT_EQ(j["gate_fail_opens_by_cause"]["target not configured"].get<int>(), 7740);
  EXPECT_EQ(j["gate_reseeds"].get<int>(), 2);
  EXPECT_EQ(j["gate_release_errors"].get<int>(), 5);
  RunRecords old = SevenTenants();  // records that did not count causes
  old.gate_fail_opens = 3;
  EXPECT_TRUE(ComputeRunMetrics(old).gate_fail_opens_by_cause.empty());
}

}  // namespace
}  // namespace bp::loadgen
