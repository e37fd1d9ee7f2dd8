// ComputeRunMetrics on the hand-made run of metrics_fixture.h: every value
// below follows from the fixture by hand (speedup 2: paper = 2 x real).
#include <gtest/gtest.h>

#include "bp/loadgen/metrics.h"
#include "metrics_fixture.h"

namespace bp::loadgen {
namespace {

TEST(RunMetricsTest, ContentionWindowEndsWhenTheFirstTenantFinishes) {
  const RunMetrics m = ComputeRunMetrics(testing::HandMadeRun());
  EXPECT_DOUBLE_EQ(m.contention_window_s, 2.0);  // a finishes at 1.0 s real
  EXPECT_DOUBLE_EQ(m.drain_span_s, 3.0);         // last completion 1.5 s real
}

TEST(RunMetricsTest, UnfinishedTenantCountsAsRunEnd) {
  RunRecords r = testing::HandMadeRun();
  r.tenants[0].finish_us = -1;  // a never finishes -> b's 1.5 s ends the window
  EXPECT_DOUBLE_EQ(ComputeRunMetrics(r).contention_window_s, 3.0);
}

TEST(RunMetricsTest, Upstream429ShareAndProxyLocalSeparately) {
  const RunMetrics m = ComputeRunMetrics(testing::HandMadeRun());
  EXPECT_EQ(m.upstream_responses, 9);  // 11 attempts - 1 connection error - 1 proxy-local
  EXPECT_EQ(m.upstream_429, 4);
  EXPECT_DOUBLE_EQ(m.share_429, 4.0 / 9.0);
  EXPECT_EQ(m.proxy_local_429, 1);
  EXPECT_DOUBLE_EQ(m.proxy_local_429_share, 1.0 / 10.0);
  EXPECT_EQ(m.connection_errors, 1);
  EXPECT_EQ(m.upstream_429_requests_bound, 2);
  EXPECT_EQ(m.upstream_429_tokens_bound, 1);
  EXPECT_EQ(m.upstream_429_other_bound, 1);
}

TEST(RunMetricsTest, ThroughputAchievementAndJainOverTheWindow) {
  const RunMetrics m = ComputeRunMetrics(testing::HandMadeRun());
  ASSERT_EQ(m.tenants.size(), 2u);
  // a: 3 OK answers before 1.0 s real over 2 paper s; b: 1 (its second is later).
  EXPECT_EQ(m.tenants[0].ok_calls_window, 3);
  EXPECT_EQ(m.tenants[1].ok_calls_window, 1);
  EXPECT_DOUBLE_EQ(m.tenants[0].ok_rps, 1.5);
  EXPECT_DOUBLE_EQ(m.tenants[1].ok_rps, 0.5);
  // WFQ on 60 with weights 0.6 / 0.4 -> 36 / 24.
  EXPECT_NEAR(m.tenants[0].ideal_rps, 36, 1e-9);
  EXPECT_NEAR(m.tenants[1].ideal_rps, 24, 1e-9);
  EXPECT_NEAR(m.tenants[0].achievement, 1.0 / 24, 1e-12);
  EXPECT_NEAR(m.tenants[1].achievement, 1.0 / 48, 1e-12);
  // J(1/24, 1/48) = (3/48)^2 / (2 * 5/48^2) = 0.9
  EXPECT_NEAR(m.achievement_jain, 0.9, 1e-12);
  EXPECT_NEAR(m.drf_jain, 0.9, 1e-12);  // one dimension: the same
  EXPECT_DOUBLE_EQ(m.ok_rps_window, 2.0);
  EXPECT_EQ(m.ok_calls, 5);
  EXPECT_EQ(m.failed_calls, 1);
  EXPECT_DOUBLE_EQ(m.mean_ok_rps, 5.0 / 3.0);
  EXPECT_EQ(m.deferrals, 2);
}

// A scenario tenant that left at 0 s: its one scheduled call was cancelled
// before it got a slot. It never demanded anything, so it is no queue: the
// shares and Jain are the two-tenant run's (with it: 3 queues, its
// achievement 0, Jain 2/3 * 0.9 and one tenant "never served").
TEST(RunMetricsTest, ATenantThatLeftBeforeAnyCallGotASlotIsNoQueue) {
  RunRecords r = testing::HandMadeRun();
  r.tenants.push_back({"gone", 2, 1.0, 0.4, 1, 0, 0, -1, 0});
  ActivityRecord cancelled = testing::Activity(7, 4, 2, 0, -1, -1, 20'000, false, 1000, 0);
  cancelled.cancelled = true;
  r.activities.push_back(cancelled);
  r.workflows.push_back({4, 2, 0, -1});
  RunMetrics m = ComputeRunMetrics(r);
  ASSERT_EQ(m.tenants.size(), 3u);
  EXPECT_NEAR(m.tenants[0].ideal_rps, 36, 1e-9);
  EXPECT_NEAR(m.tenants[1].ideal_rps, 24, 1e-9);
  EXPECT_EQ(m.tenants[2].ideal_rps, 0);
  EXPECT_NEAR(m.achievement_jain, 0.9, 1e-12);
  EXPECT_NEAR(m.drf_jain, 0.9, 1e-12);
  EXPECT_EQ(m.tenants_never_served, 0);
  EXPECT_EQ(m.cancelled_calls, 1);
  EXPECT_DOUBLE_EQ(m.contention_window_s, 2.0);

  // Had its call got a slot (OK at 10 ms real), it demanded: three queues.
  // Hierarchical: class 1 keeps 0.6 of 60 = 36, class 2's 24 is split by
  // its two tenants, 12 each; achievements 1.5/36, 0.5/12, 0.5/12 = 1/24
  // each -> J = 1 (flat, 0.6 : 0.4 : 0.4, would give J = 8/9).
  r.activities.back() = testing::Activity(7, 4, 2, 0, 5'000, 10'000, 10'000, true, 1000, 0);
  m = ComputeRunMetrics(r);
  EXPECT_NEAR(m.tenants[0].ideal_rps, 36, 1e-9);
  EXPECT_NEAR(m.tenants[1].ideal_rps, 12, 1e-9);
  EXPECT_NEAR(m.tenants[2].ideal_rps, 12, 1e-9);
  EXPECT_NEAR(m.achievement_jain, 1.0, 1e-12);
  r.flat_share = true;
  m = ComputeRunMetrics(r);
  EXPECT_NEAR(m.tenants[2].ideal_rps, 24 / 1.4, 1e-9);
  EXPECT_NEAR(m.achievement_jain, 8.0 / 9.0, 1e-12);
}

TEST(RunMetricsTest, DrfJainWithATokenHeavyTenant) {
  RunRecords r = testing::HandMadeRun();
  r.cap_tokens_per_s = 12000;
  const RunMetrics m = ComputeRunMetrics(r);
  // a: 120 tokens/call, sigma 1/60; b: 1200 tokens/call, sigma 0.1.
  // D_req = 0.6*60 + 0.4*10 = 40; D_tok = 0.6*120*60 + 0.4*1200*10 = 9120
  // X* = min(60/40, 12000/9120) = 12000/9120 (tokens bind).
  const double x = 12000.0 / 9120.0;
  EXPECT_NEAR(m.tenants[0].ideal_rps, 36 * x, 1e-9);
  EXPECT_NEAR(m.tenants[1].ideal_rps, 4 * x, 1e-9);
  EXPECT_NEAR(m.tenants[0].ideal_dominant_share, 0.6 * x, 1e-9);
  // Observed dominant share per paper s: a 3 * (1/60) / 2 = 0.025, b 0.1 / 2 = 0.05.
  EXPECT_NEAR(m.tenants[0].dominant_share, 0.025, 1e-12);
  EXPECT_NEAR(m.tenants[1].dominant_share, 0.05, 1e-12);
  // r_a : r_b = 0.025/0.6 : 0.05/0.4 = 1 : 3 -> J = 16 / 20.
  EXPECT_NEAR(m.drf_jain, 0.8, 1e-12);
}

TEST(RunMetricsTest, LatenciesPerClassInPaperMilliseconds) {
  const RunMetrics m = ComputeRunMetrics(testing::HandMadeRun());
  ASSERT_EQ(m.classes.size(), 2u);
  const ClassMetrics& p1 = m.classes[0];
  EXPECT_EQ(p1.priority, 1);
  // HTTP: 50, 300, 50 ms real -> 100, 600, 100 paper ms.
  EXPECT_EQ(p1.http.count, 3);
  EXPECT_DOUBLE_EQ(p1.http.p50_ms, 100);
  EXPECT_DOUBLE_EQ(p1.http.p95_ms, 550);  // h = 1.9: 100 + 0.9 * 500
  EXPECT_DOUBLE_EQ(p1.http.mean_ms, 800.0 / 3);
  // End to end: 70, 410, 500 ms real -> 140, 820, 1000; p95 = 820 + 0.9 * 180.
  EXPECT_DOUBLE_EQ(p1.end_to_end.p95_ms, 982);
  EXPECT_DOUBLE_EQ(p1.slot_ms_per_ok_call, 300);  // 900 paper ms / 3
  EXPECT_DOUBLE_EQ(p1.workflow.mean_ms, 2000);
  const ClassMetrics& p2 = m.classes[1];
  EXPECT_EQ(p2.http.count, 2);                    // the given-up one is left out
  EXPECT_DOUBLE_EQ(p2.http.p50_ms, 700);          // 1000 and 400
  EXPECT_DOUBLE_EQ(p2.slot_ms_per_ok_call, 300);  // 600 / 2
  EXPECT_EQ(p2.workflow.count, 1);                // the unfinished one is left out
  EXPECT_DOUBLE_EQ(m.slot_ms_per_ok_call, 300);
}

TEST(RunMetricsTest, HeatmapBucketsAndStarvation) {
  MetricsOptions o;
  o.heatmap_bucket_s = 1.0;
  const RunMetrics m = ComputeRunMetrics(testing::HandMadeRun(), o);
  const ServiceHeatmap& h = m.heatmap;
  ASSERT_EQ(h.tenants.size(), 2u);
  EXPECT_EQ(h.tenants[0], "a P1");
  ASSERT_EQ(h.ok_rps[0].size(), 3u);  // 3 paper s
  // a answers at 0.12, 0.8, 1.9 paper s; b at 1.04 and 2.8.
  EXPECT_EQ(h.ok_rps[0], (std::vector<double>{2, 1, 0}));
  EXPECT_EQ(h.ok_rps[1], (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(h.starved[0], (std::vector<bool>{false, false, false}));  // a done at 2 s
  EXPECT_EQ(h.starved[1], (std::vector<bool>{true, false, false}));
}

TEST(RunMetricsTest, TenantDemandCapGivesItsShareToTheOthers) {
  MetricsOptions o;
  o.tenant_demand_cap_rps = {0, 6};  // b can use only 6 req/s -> a gets 54
  const RunMetrics m = ComputeRunMetrics(testing::HandMadeRun(), o);
  EXPECT_NEAR(m.tenants[0].ideal_rps, 54, 1e-9);
  EXPECT_NEAR(m.tenants[1].ideal_rps, 6, 1e-9);
  // r = 1.5/54 = 1/36, 0.5/6 = 1/12 -> 1 : 3 -> J = 0.8
  EXPECT_NEAR(m.achievement_jain, 0.8, 1e-12);
}

TEST(RunMetricsTest, BoundNamesAreMatchedByDimension) {
  RunRecords r = testing::HandMadeRun();
  r.attempts = {testing::Attempt(1, 0, 0, 429, "input_tokens"),
                testing::Attempt(1, 0, 0, 429, "requests"),
                testing::Attempt(1, 0, 0, 429, "rate_limit_error")};
  const RunMetrics m = ComputeRunMetrics(r);
  EXPECT_EQ(m.upstream_429_tokens_bound, 1);
  EXPECT_EQ(m.upstream_429_requests_bound, 1);
  EXPECT_EQ(m.upstream_429_other_bound, 1);
}

TEST(RunMetricsTest, EmptyRunGivesZeros) {
  const RunMetrics m = ComputeRunMetrics(RunRecords{});
  EXPECT_EQ(m.ok_calls, 0);
  EXPECT_DOUBLE_EQ(m.share_429, 0);
  EXPECT_DOUBLE_EQ(m.contention_window_s, 0);
  EXPECT_DOUBLE_EQ(m.achievement_jain, 1);
}

TEST(ScalarMetricsTest, NamesTheHeadlineNumbers) {
  const RunMetrics m = ComputeRunMetrics(testing::HandMadeRun());
  const auto s = ScalarMetrics(m);
  auto find = [&](const std::string& name) {
    for (const auto& [n, v] : s) {
      if (n == name) return v;
    }
    ADD_FAILURE() << "missing " << name;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(find("share_429"), 4.0 / 9.0);
  EXPECT_DOUBLE_EQ(find("class.P1.ok_rps"), 1.5);
  EXPECT_DOUBLE_EQ(find("class.P1.http_p95_ms"), 550);
  EXPECT_DOUBLE_EQ(find("class.P2.workflow_mean_s"), 3);
  EXPECT_DOUBLE_EQ(find("tenant.b.ok_rps"), 0.5);
  EXPECT_DOUBLE_EQ(find("share_429_requests_bound"), 0.5);
}

TEST(ScalarMetricsTest, WorkflowCompletionSinceRunStartBesideWorkflowDuration) {
  RunRecords r = testing::HandMadeRun();                // speedup 2: real us x 2 / 1e6 = paper s
  r.workflows.push_back({5, 1, 1'000'000, 2'000'000});  // b (P2): starts 2 s, ends 4 s paper
  const RunMetrics m = ComputeRunMetrics(r);
  const ClassMetrics* p2 = nullptr;
  for (const ClassMetrics& c : m.classes) p2 = c.priority == 2 ? &c : p2;
  ASSERT_NE(p2, nullptr);
  // Durations 3 s and 2 s -> mean 2.5 s; ends 3 s and 4 s after the start -> 3.5 s.
  EXPECT_DOUBLE_EQ(p2->workflow.mean_ms, 2500);
  EXPECT_DOUBLE_EQ(p2->workflow_end_mean_s, 3.5);
  bool found = false;
  for (const auto& [name, value] : ScalarMetrics(m)) {
    if (name == "class.P2.workflow_end_mean_s") {
      EXPECT_DOUBLE_EQ(value, 3.5);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace bp::loadgen
