// VTC's service difference (vtc.h) and Admit calls per OK call on small
// hand-made records. Caps are powers of two so the sums are exact.
#include <gtest/gtest.h>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/report.h"
#include "bp/loadgen/vtc.h"
#include "loadgen/metrics_fixture.h"

namespace bp::loadgen {
namespace {

using testing::Activity;

constexpr int64_t kS = 1'000'000;  // one second in us

// An OK activity of `tenant` waiting over [sched, send], served at `send`.
ActivityRecord Ok(int64_t id, int tenant, int64_t sched, int64_t send, int64_t done,
                  int64_t tokens = 0) {
  return Activity(id, id, tenant, sched, send, send + 1, done, true, tokens, 0);
}

RunRecords TwoTenants(double w_a, double w_b) {
  RunRecords r;
  r.cap_requests_per_s = 4;  // sigma = 1/4 per call
  r.end_us = 10 * kS;
  r.tenants = {{"a", 1, w_a, 0.5, 4, 0, -1}, {"b", 1, w_b, 0.5, 2, 0, -1}};
  return r;
}

// a (w 1) waits over [0, 5 s] (its last send), b (w 2) over [2 s, 6 s]: one
// shared interval [2 s, 5 s]. D = a's service - b's, per weight: 3 s +0.25
// -> 0.25, 3.5 s -0.125 -> 0.125, 4 s -> 0.375, 5 s -> 0.625 (the send that
// ends a's backlog counts). Range 0.625 - 0 (a's call at 1 s is before the
// interval, b's at 6 s after it); U = 0.25 (a's call).
TEST(VtcMeasureTest, RangeOfTheWeightedDifferenceOverTheSharedInterval) {
  RunRecords r = TwoTenants(1, 2);
  r.activities = {Ok(1, 0, 0, 1 * kS, 10 * kS),        Ok(2, 0, 0, 3 * kS, 10 * kS),
                  Ok(3, 0, 0, 4 * kS, 10 * kS),        Ok(4, 0, 0, 5 * kS, 10 * kS),
                  Ok(5, 1, 2 * kS, 3'500'000, 8 * kS), Ok(6, 1, 2 * kS, 6 * kS, 8 * kS)};
  const VtcMeasure v = ComputeVtcMeasure(r);
  EXPECT_EQ(v.max_diff, 0.625);
  EXPECT_EQ(v.max_diff_u, 2.5);
  EXPECT_EQ(v.pairs, 1);
  EXPECT_EQ(v.priority, 1);
  EXPECT_EQ(v.tenant_a, "a");
  EXPECT_EQ(v.tenant_b, "b");
}

// Sends at the same instant count together: a and b alternate in lockstep,
// so D never leaves 0 (one at a time it would reach 0.25).
TEST(VtcMeasureTest, SimultaneousSendsCountTogether) {
  RunRecords r = TwoTenants(1, 1);
  r.activities = {Ok(1, 0, 0, 1 * kS, 10 * kS), Ok(2, 1, 0, 1 * kS, 10 * kS),
                  Ok(3, 0, 0, 2 * kS, 10 * kS), Ok(4, 1, 0, 2 * kS, 10 * kS)};
  const VtcMeasure v = ComputeVtcMeasure(r);
  EXPECT_EQ(v.max_diff, 0);
  EXPECT_EQ(v.max_diff_u, 0);
  EXPECT_EQ(v.pairs, 1);
}

// The dominant share counts tokens when C_t > 0: 512 tokens of 1024/s is
// 0.5 s of cap, above the request's 0.25. b waits over [4 s, 5 s], after
// a's wait [0, 1 s]: no pair, nothing measured.
TEST(VtcMeasureTest, DominantShareAndDisjointBacklogs) {
  RunRecords r = TwoTenants(1, 1);
  r.cap_tokens_per_s = 1024;
  r.activities = {Ok(1, 0, 0, 1 * kS, 4 * kS, 512), Ok(2, 1, 4 * kS, 5 * kS, 6 * kS, 512)};
  VtcMeasure v = ComputeVtcMeasure(r);
  EXPECT_EQ(v.max_diff, -1);
  EXPECT_EQ(v.pairs, 0);
  // b waits from 0: shared [0, 1 s], a's 0.5 at 1 s; b's call at 5 s is after it.
  r.activities[1].scheduled_us = 0;
  v = ComputeVtcMeasure(r);
  EXPECT_EQ(v.max_diff, 0.5);
  EXPECT_EQ(v.max_diff_u, 1);
}

// Tenants of different classes are never paired; a class above
// kVtcMaxTenants tenants is skipped and counted.
TEST(VtcMeasureTest, PairsStayInsideAClassAndLargeClassesAreSkipped) {
  RunRecords r = TwoTenants(1, 1);
  r.tenants[1].priority = 2;
  r.activities = {Ok(1, 0, 0, 1 * kS, 10 * kS), Ok(2, 1, 0, 2 * kS, 10 * kS)};
  EXPECT_EQ(ComputeVtcMeasure(r).pairs, 0);
  for (int i = 0; i <= kVtcMaxTenants; ++i) r.tenants.push_back({"x", 3, 1, 1, 1, 0, -1});
  EXPECT_EQ(ComputeVtcMeasure(r).classes_skipped, 1);
}

// Admit calls per OK call: every gate decision over the run's OK calls (the
// hand-made run has 5 OK calls); -1 when the run has no gate decisions.
TEST(VtcMeasureTest, AdmitCallsPerOkCallInTheRunMetrics) {
  RunRecords r = testing::HandMadeRun();
  EXPECT_EQ(ComputeRunMetrics(r).admit_calls_per_ok_call, -1);
  for (int i = 0; i < 10; ++i) r.gate_decisions.push_back({i * 1000, i % 2, GateVerdict::kDefer});
  const RunMetrics m = ComputeRunMetrics(r);
  ASSERT_EQ(m.ok_calls, 5);
  EXPECT_EQ(m.admit_calls_per_ok_call, 2);
  const std::string table = RunTableMarkdown(m);
  EXPECT_NE(table.find("| VTC diff (U) | Admit / OK |"), std::string::npos) << table;
  EXPECT_NE(table.find(" | 2.00 | "), std::string::npos) << table;
}

}  // namespace
}  // namespace bp::loadgen
