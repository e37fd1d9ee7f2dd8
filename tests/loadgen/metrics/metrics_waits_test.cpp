// Per-class wait breakdown (ClassMetrics::deferrals_by_cause, retries_429,
// tail) on the hand-made run of metrics_fixture.h, in paper ms (speedup 2).
#include <gtest/gtest.h>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/report.h"
#include "metrics_fixture.h"

namespace bp::loadgen {
namespace {

RunRecords WithDeferrals() {
  RunRecords r = testing::HandMadeRun();
  r.deferrals = {
      {3, 0, 550'000, 100'000, "fair"},         // P1, activity 3 (the P1 tail): 200 ms
      {3, 0, 700'000, 150'000, "l1:requests"},  // P1 tail: 300 ms
      {2, 0, 150'000, 50'000, "429"},           // P1, not the tail: 100 ms
      {5, 1, 700'000, 250'000, "fair"},         // P2 tail: 500 ms
      {6, 1, 100'000, 10'000, "l1:tokens"},     // P2, activity 6 failed: 20 ms
      {9, 7, 100'000, 10'000, "fair"},          // unknown tenant: ignored
  };
  return r;
}

TEST(RunMetricsWaits, DeferralsPerClassAndCauseInPaperMs) {
  RunMetrics m = ComputeRunMetrics(WithDeferrals());
  ASSERT_EQ(m.classes.size(), 2u);
  const ClassMetrics& p1 = m.classes[0];
  const ClassMetrics& p2 = m.classes[1];
  ASSERT_EQ(p1.deferrals_by_cause.size(), 3u);
  EXPECT_EQ(p1.deferrals_by_cause.at("fair").count, 1);
  EXPECT_DOUBLE_EQ(p1.deferrals_by_cause.at("fair").total_ms, 200);
  EXPECT_DOUBLE_EQ(p1.deferrals_by_cause.at("l1:requests").total_ms, 300);
  EXPECT_DOUBLE_EQ(p1.deferrals_by_cause.at("429").total_ms, 100);
  ASSERT_EQ(p2.deferrals_by_cause.size(), 2u);
  EXPECT_DOUBLE_EQ(p2.deferrals_by_cause.at("fair").total_ms, 500);
  EXPECT_EQ(p2.deferrals_by_cause.at("l1:tokens").count, 1);
  EXPECT_DOUBLE_EQ(p2.deferrals_by_cause.at("l1:tokens").total_ms, 20);
}

TEST(RunMetricsWaits, RetriesAfter429AreAnswerToNextSend) {
  RunMetrics m = ComputeRunMetrics(WithDeferrals());
  // P1: activity 2's 429s answered at 150 and 250 ms real, next sends at 200
  // and 350 ms: 50 + 100 ms real = 300 paper ms.
  EXPECT_EQ(m.classes[0].retries_429.count, 2);
  EXPECT_DOUBLE_EQ(m.classes[0].retries_429.total_ms, 300);
  // P2: activity 4 (70 -> 470 ms) and 6 (80 -> 600 ms; its proxy-local 429
  // is last and not counted): 400 + 520 ms real = 1840 paper ms.
  EXPECT_EQ(m.classes[1].retries_429.count, 2);
  EXPECT_DOUBLE_EQ(m.classes[1].retries_429.total_ms, 1840);
}

TEST(RunMetricsWaits, TailIsTheActivitiesAtOrAboveTheClassP95) {
  RunMetrics m = ComputeRunMetrics(WithDeferrals());
  // P1 end-to-end 140, 820, 1000 ms: only activity 3 is in the tail.
  EXPECT_EQ(m.classes[0].tail_activities, 1);
  ASSERT_EQ(m.classes[0].tail_deferrals_by_cause.size(), 2u);
  EXPECT_DOUBLE_EQ(m.classes[0].tail_deferrals_by_cause.at("fair").total_ms, 200);
  EXPECT_DOUBLE_EQ(m.classes[0].tail_deferrals_by_cause.at("l1:requests").total_ms, 300);
  // P2 end-to-end 1060, 1800 ms: activity 5.
  EXPECT_EQ(m.classes[1].tail_activities, 1);
  ASSERT_EQ(m.classes[1].tail_deferrals_by_cause.size(), 1u);
  EXPECT_DOUBLE_EQ(m.classes[1].tail_deferrals_by_cause.at("fair").total_ms, 500);
}

TEST(RunMetricsWaits, NoDeferralsGiveEmptyCauses) {
  RunMetrics m = ComputeRunMetrics(testing::HandMadeRun());
  EXPECT_TRUE(m.classes[0].deferrals_by_cause.empty());
  EXPECT_EQ(m.classes[0].retries_429.count, 2);  // the attempts still count
}

}  // namespace
}  // namespace bp::loadgen
