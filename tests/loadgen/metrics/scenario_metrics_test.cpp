// Scenario metrics (scenario_metrics.h) on hand-made records, speedup 1:
// windows against the state in force, time to fair share, the time series.
#include "bp/loadgen/scenario_metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bp/loadgen/report.h"

namespace bp::loadgen {
namespace {

constexpr int64_t kS = 1000000;  // one second in us

void AddOk(RunRecords& r, int tenant, int64_t at_us) {
  ActivityRecord a;
  a.id = static_cast<int64_t>(r.activities.size());
  a.tenant_index = tenant;
  a.ok = true;
  a.final_answer_us = at_us;
  a.completed_us = at_us;
  a.prompt_tokens = 10;
  r.activities.push_back(a);
}

// Two tenants (w 1, omega 1), cap 8 req/s; at 1 s tenant a's weight becomes 3
// (ideal 6 and 2 req/s from then on).
struct Fixture {
  RunRecords r;
  std::vector<ScenarioEvent> events;
  Fixture() {
    r.speedup = 1;
    r.cap_requests_per_s = 8;
    r.end_us = 4 * kS;
    for (const char* id : {"a", "b"}) {
      TenantInfo t;
      t.id = id;
      t.total_activities = 100;
      r.tenants.push_back(t);
    }
    ScenarioEvent w;
    w.type = EventType::kTenantWeight;
    w.at_s = 1;
    w.tenant = "a";
    w.tenant_index = 0;
    w.weight = 3;
    w.window_s = 1;
    events.push_back(w);
    r.events.push_back({0, 0, kS, kS, true, "written"});
    for (int64_t t : {1000, 1100, 1200}) AddOk(r, 0, t * 1000);         // a in [1, 2): 3
    for (int64_t t : {1500, 1600}) AddOk(r, 1, t * 1000);               // b in [1, 2): 2
    for (int64_t t = 2000; t <= 2500; t += 100) AddOk(r, 0, t * 1000);  // a: 6 in [2, 2.5]
    for (int64_t t : {2000, 2500}) AddOk(r, 1, t * 1000);
    AttemptRecord ok, throttled, local;
    ok.status = 200;
    ok.done_us = 1500 * 1000;
    throttled.status = 429;
    throttled.done_us = 1600 * 1000;
    local = throttled;
    local.proxy_local = true;  // the litellm gateway's own: not an upstream answer
    r.attempts = {ok, throttled, local};
    AttemptRecord outside = ok;
    outside.tenant_index = -1;
    r.outside_attempts = {outside};
    r.gate_decisions = {{1100 * 1000, 0, GateVerdict::kFailOpen},
                        {1200 * 1000, 0, GateVerdict::kAdmit},
                        {2100 * 1000, 1, GateVerdict::kDefer}};
  }
};

TEST(ScenarioMetrics, WindowUsesTheWeightsInForce) {
  Fixture f;
  WindowMetrics w = ComputeWindow(f.r, f.events, kS, 2 * kS);
  EXPECT_DOUBLE_EQ(w.capacity_requests_per_s, 8);
  ASSERT_EQ(w.tenants.size(), 2u);
  EXPECT_DOUBLE_EQ(w.tenant_ideal_rps[0], 6);  // 8 x 3 / 4
  EXPECT_DOUBLE_EQ(w.tenant_ideal_rps[1], 2);
  EXPECT_DOUBLE_EQ(w.tenant_ok_rps[0], 3);
  EXPECT_DOUBLE_EQ(w.tenant_ok_rps[1], 2);
  EXPECT_DOUBLE_EQ(w.achievement_jain, 0.9);  // ratios 0.5, 1: 1.5^2 / (2 x 1.25)
  EXPECT_EQ(w.responses, 2);                  // the gateway's 429 is not counted
  EXPECT_EQ(w.throttled, 1);
  EXPECT_DOUBLE_EQ(w.share_429, 0.5);
  EXPECT_EQ(w.fail_opens, 1);
  EXPECT_EQ(w.outside_ok, 1);
  EXPECT_DOUBLE_EQ(w.ok_rps, 5);
  // Before the event both weigh 1: ideal 4 and 4.
  WindowMetrics before = ComputeWindow(f.r, f.events, 0, kS - 1);
  EXPECT_DOUBLE_EQ(before.tenant_ideal_rps[0], 4);
}

TEST(ScenarioMetrics, CapacityFollowsLimitsAndOutsideShare) {
  Fixture f;
  ScenarioEvent limits;
  limits.type = EventType::kUpstreamLimits;
  limits.caps = {4, 0};
  ScenarioEvent outside;
  outside.type = EventType::kOutsideTraffic;
  outside.share = 0.25;
  f.events.push_back(limits);
  f.events.push_back(outside);
  f.r.events.push_back({1, 0, kS / 2, kS / 2, true, ""});
  EXPECT_DOUBLE_EQ(ComputeWindow(f.r, f.events, kS, 2 * kS).capacity_requests_per_s, 4);
  f.r.events.push_back({2, 0, kS / 2, kS / 2, true, ""});
  EXPECT_DOUBLE_EQ(ComputeWindow(f.r, f.events, kS, 2 * kS).capacity_requests_per_s, 3);
  f.r.events[1].applied = false;  // mockapi refused the limits: the old cap holds
  EXPECT_DOUBLE_EQ(ComputeWindow(f.r, f.events, kS, 2 * kS).capacity_requests_per_s, 6);
}

TEST(ScenarioMetrics, TimeToFairShareSlidesBy250ms) {
  Fixture f;
  // a (ideal 6/s) has 3 in [1, 2), 3 in [1.25, 2.25), 5 in [1.5, 2.5) (|5 - 6| > 0.6),
  // 6 in [1.75, 2.75): within 10 % at 2.75 s, 1.75 s after the event.
  EXPECT_DOUBLE_EQ(TimeToFairShare(f.r, f.events, {0}, kS, 4 * kS), 1.75);
  EXPECT_DOUBLE_EQ(TimeToFairShare(f.r, f.events, {0}, kS, 2 * kS), -1);  // not by 2 s
  ScenarioMetrics m = ComputeScenarioMetrics(f.r, f.events);
  ASSERT_EQ(m.events.size(), 1u);
  EXPECT_EQ(m.events[0].tracked, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(m.events[0].at_s, 1);
  EXPECT_DOUBLE_EQ(m.events[0].time_to_share_s, -1);  // window_s 1: limit 2 s
}

TEST(ScenarioMetrics, TimelinePerSecond) {
  Fixture f;
  ScenarioMetrics m = ComputeScenarioMetrics(f.r, f.events);
  ASSERT_EQ(m.timeline.buckets.size(), 4u);  // end 4 s
  EXPECT_EQ(m.timeline.tenants, (std::vector<std::string>{"a", "b"}));
  const TimelineBucket& b1 = m.timeline.buckets[1];
  EXPECT_DOUBLE_EQ(b1.t_s, 1);
  EXPECT_EQ(b1.ok_rps, (std::vector<double>{3, 2}));
  EXPECT_DOUBLE_EQ(b1.throttled_per_s, 1);
  EXPECT_DOUBLE_EQ(b1.responses_per_s, 2);
  EXPECT_DOUBLE_EQ(b1.outside_ok_per_s, 1);
  EXPECT_DOUBLE_EQ(b1.fail_opens_per_s, 1);
  EXPECT_DOUBLE_EQ(b1.admits_per_s, 1);
  EXPECT_EQ(m.timeline.buckets[2].ok_rps, (std::vector<double>{6, 2}));
  EXPECT_DOUBLE_EQ(m.timeline.buckets[2].defers_per_s, 1);
  EXPECT_EQ(m.outside_ok, 1);
}

}  // namespace
}  // namespace bp::loadgen

namespace bp::loadgen {
namespace {

TEST(ScenarioReport, WritesTimelineAndSummarySection) {
  Fixture f;
  f.r.gate_fail_opens = 7;
  RunMetrics run;
  run.workload = "w";
  run.configuration = "bp";
  run.gate_fail_opens = 7;
  ScenarioMetrics m = ComputeScenarioMetrics(f.r, f.events);
  const auto dir =
      std::filesystem::temp_directory_path() / ("bp-scenario-report-" + std::to_string(::getpid()));
  ReportOptions options;
  options.figures = false;
  ASSERT_TRUE(WriteScenarioOutputs(dir, run, m, options).ok());
  std::ifstream summary(dir / "summary.json");
  const auto j = nlohmann::json::parse(summary);
  EXPECT_EQ(j["gate_fail_opens"].get<int>(), 7);
  EXPECT_EQ(j["scenario"]["gate_fail_opens"].get<int>(), 7);
  ASSERT_EQ(j["scenario"]["events"].size(), 1u);
  EXPECT_EQ(j["scenario"]["events"][0]["type"], "tenant_weight");
  EXPECT_EQ(j["scenario"]["events"][0]["tracked"], nlohmann::json::array({"a"}));
  std::ifstream csv(dir / "timeline.csv");
  std::string header, row0, row1;
  std::getline(csv, header);
  std::getline(csv, row0);
  std::getline(csv, row1);
  EXPECT_EQ(header,
            "t_s,ok_rps.a,ok_rps.b,throttled_per_s,responses_per_s,outside_ok_per_s,"
            "outside_throttled_per_s,admits_per_s,defers_per_s,fail_opens_per_s");
  EXPECT_EQ(row1, "1.000,3.00,2.00,1.00,2.00,1.00,0.00,1.00,0.00,1.00");
  EXPECT_FALSE(std::filesystem::exists(dir / "timeline.gp"));  // figures off
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bp::loadgen
