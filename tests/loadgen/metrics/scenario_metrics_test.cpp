// Scenario metrics (scenario_metrics.h) on hand-made records, speedup 1:
// windows against the state in force, time to fair share, the time series.
#include "bp/loadgen/scenario_metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bp/loadgen/metrics.h"
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
    AttemptRecord outside = ok;  // after the windows below: it takes none of their capacity
    outside.tenant_index = -1;
    outside.done_us = 3500 * 1000;
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
  EXPECT_EQ(w.outside_ok, 0);
  EXPECT_DOUBLE_EQ(w.ok_rps, 5);
  // Before the event both weigh 1: ideal 4 and 4.
  WindowMetrics before = ComputeWindow(f.r, f.events, 0, kS - 1);
  EXPECT_DOUBLE_EQ(before.tenant_ideal_rps[0], 4);
}

TEST(ScenarioMetrics, CapacityFollowsTheLimitsThatTookEffect) {
  Fixture f;
  ScenarioEvent limits;
  limits.type = EventType::kUpstreamLimits;
  limits.caps = {4, 0};
  f.events.push_back(limits);
  f.r.events.push_back({1, 0, kS / 2, kS / 2, true, ""});
  EXPECT_DOUBLE_EQ(ComputeWindow(f.r, f.events, kS, 2 * kS).capacity_requests_per_s, 4);
  f.r.events[1].applied = false;  // mockapi refused the limits: the old cap holds
  EXPECT_DOUBLE_EQ(ComputeWindow(f.r, f.events, kS, 2 * kS).capacity_requests_per_s, 8);
}

// Tokens bind: cap 60 req/s and 3000 tok/s, two equal tenants at 100 tokens a
// call; in [0, 1) an outside client at 30 % of the request cap had 18 OK
// answers of 100 tokens. Left: 60 - 18 = 42 req/s, 3000 - 1800 = 1200 tok/s,
// so the tenants could get 12 req/s (6 each), not 42 (nor 21, the token cap
// scaled by the request share).
TEST(ScenarioMetrics, CapacityLeftIsPerDimensionAndTheBindingOneSetsTheShares) {
  RunRecords r;
  r.speedup = 1;
  r.cap_requests_per_s = 60;
  r.cap_tokens_per_s = 3000;
  r.end_us = kS;
  for (const char* id : {"a", "b"}) {
    TenantInfo t;
    t.id = id;
    t.total_activities = 100;
    r.tenants.push_back(t);
  }
  for (int i = 0; i < 6; ++i) {
    AddOk(r, 0, 100000 * (i + 1));
    AddOk(r, 1, 100000 * (i + 1));
  }
  for (ActivityRecord& a : r.activities) a.prompt_tokens = 100;  // 100 tokens a call
  for (int i = 0; i < 18; ++i) {
    AttemptRecord o;
    o.tenant_index = -1;
    o.activity_id = -1;
    o.status = 200;
    o.done_us = 50000 * (i + 1);
    o.tokens = 100;
    r.outside_attempts.push_back(o);
  }
  AttemptRecord throttled;  // a refused outside call uses nothing
  throttled.status = 429;
  throttled.done_us = 990000;
  r.outside_attempts.push_back(throttled);
  const WindowMetrics w = ComputeWindow(r, {}, 0, kS);
  EXPECT_DOUBLE_EQ(w.outside_requests_per_s, 18);
  EXPECT_DOUBLE_EQ(w.outside_tokens_per_s, 1800);
  EXPECT_DOUBLE_EQ(w.capacity_requests_per_s, 42);
  EXPECT_DOUBLE_EQ(w.capacity_tokens_per_s, 1200);
  EXPECT_EQ(w.binding, "tokens");
  EXPECT_DOUBLE_EQ(w.capacity_rps, 12);
  ASSERT_EQ(w.tenants.size(), 2u);
  EXPECT_DOUBLE_EQ(w.tenant_ideal_rps[0], 6);
  EXPECT_DOUBLE_EQ(w.tenant_ok_rps[0], 6);  // the gate used all that was left: achievement 1
  // Without the outside client the token cap binds at 30 req/s.
  r.outside_attempts.clear();
  const WindowMetrics alone = ComputeWindow(r, {}, 0, kS);
  EXPECT_DOUBLE_EQ(alone.capacity_rps, 30);
  EXPECT_EQ(alone.binding, "tokens");
  // The whole-run metrics judge against the same capacity left.
  for (int i = 0; i < 18; ++i) {
    AttemptRecord o;
    o.status = 200;
    o.done_us = 50000 * (i + 1);
    o.tokens = 100;
    r.outside_attempts.push_back(o);
  }
  const RunMetrics m = ComputeRunMetrics(r);  // contention window: the run, 1 s
  EXPECT_DOUBLE_EQ(m.capacity_left_requests_per_s, 42);
  EXPECT_DOUBLE_EQ(m.capacity_left_tokens_per_s, 1200);
  EXPECT_DOUBLE_EQ(m.tenants[0].ideal_rps, 6);
  EXPECT_DOUBLE_EQ(m.tenants[0].achievement, 1);
}

// Tenant c leaves at 2 s; its leave is recorded a few us before the event's
// own record (LeaveTenant runs first), and its cancelled calls finish it in
// between. It was active all through the window before: it is in it.
TEST(ScenarioMetrics, TheLeavingTenantIsInTheWindowBeforeItsLeave) {
  RunRecords r;
  r.speedup = 1;
  r.cap_requests_per_s = 9;
  r.end_us = 3 * kS;
  for (const char* id : {"a", "b", "c"}) {
    TenantInfo t;
    t.id = id;
    t.total_activities = 100;
    r.tenants.push_back(t);
  }
  r.tenants[2].leave_us = 2 * kS + 3;
  r.tenants[2].finish_us = 2 * kS + 4;
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t k = 0; k < 3; ++k) AddOk(r, static_cast<int>(t), kS + 100000 * (3 * k + t + 1));
  }
  AddOk(r, 0, 2500000);  // after the leave
  ScenarioEvent leave;
  leave.type = EventType::kLeave;
  leave.tenant = "c";
  leave.tenant_index = 2;
  leave.at_s = 2;
  leave.window_s = 1;
  r.events.push_back({0, 0, 2 * kS, 2 * kS + 5, true, "left"});
  const ScenarioMetrics m = ComputeScenarioMetrics(r, {leave});
  ASSERT_EQ(m.events.size(), 1u);
  const WindowMetrics& before = m.events[0].before;  // [1 s + 5 us, 2 s + 5 us)
  EXPECT_EQ(before.tenants, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(before.tenant_ideal_rps, (std::vector<double>{3, 3, 3}));  // 9 / 3
  EXPECT_DOUBLE_EQ(before.achievement_jain, 1);                        // 3 OK calls each
  // Unservable and never served, c would be in no window (metrics.h).
  RunRecords flagged = r;
  flagged.tenants[2].unservable = true;
  EXPECT_EQ(ComputeWindow(flagged, {leave}, kS, 2 * kS).tenants, (std::vector<int>{0, 1, 2}));
  for (ActivityRecord& a : flagged.activities) a.ok = a.ok && a.tenant_index != 2;
  EXPECT_EQ(ComputeWindow(flagged, {leave}, kS, 2 * kS).tenants, (std::vector<int>{0, 1}));
  const WindowMetrics& after = m.events[0].after;  // [2 s + 5 us, 3 s)
  EXPECT_EQ(after.tenants, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.events[0].tracked, (std::vector<int>{0, 1}));
}

// Active for part of a window: in it, with the share of the part. Cap 8;
// in [1, 2) b finishes at 1.5 s and c joins (by event) at 1.5 s: [1, 1.5)
// a and b get 4 each, [1.5, 2) a and c 4 each; over the window a 4, b 2, c 2.
TEST(ScenarioMetrics, ATenantActiveForPartOfAWindowHasThatPartsShare) {
  RunRecords r;
  r.speedup = 1;
  r.cap_requests_per_s = 8;
  r.end_us = 3 * kS;
  for (const char* id : {"a", "b", "c"}) {
    TenantInfo t;
    t.id = id;
    t.total_activities = 100;
    r.tenants.push_back(t);
  }
  r.tenants[1].finish_us = 1500000;
  r.tenants[2].join_us = 1500000 - 2;  // JoinTenant runs before the event is recorded
  ScenarioEvent join;
  join.type = EventType::kJoin;
  join.tenant = "c";
  join.tenant_index = 2;
  r.events.push_back({0, 0, 1500000, 1500000, true, "joined"});
  for (int64_t at : {1100000, 1300000, 1600000, 1800000}) AddOk(r, 0, at);
  AddOk(r, 1, 1200000);
  AddOk(r, 2, 1700000);
  const WindowMetrics w = ComputeWindow(r, {join}, kS, 2 * kS);
  EXPECT_EQ(w.tenants, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(w.tenant_ideal_rps, (std::vector<double>{4, 2, 2}));
  EXPECT_EQ(w.tenant_ok_rps, (std::vector<double>{4, 1, 1}));
  EXPECT_DOUBLE_EQ(w.capacity_rps, 8);
  // The window before the join holds no c.
  EXPECT_EQ(ComputeWindow(r, {join}, kS / 2, 1500000).tenants, (std::vector<int>{0, 1}));
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
  EXPECT_DOUBLE_EQ(b1.outside_ok_per_s, 0);
  EXPECT_DOUBLE_EQ(m.timeline.buckets[3].outside_ok_per_s, 1);
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
  EXPECT_EQ(row1, "1.000,3.00,2.00,1.00,2.00,0.00,0.00,1.00,0.00,1.00");
  EXPECT_FALSE(std::filesystem::exists(dir / "timeline.gp"));  // figures off
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bp::loadgen
