// Admit ahead on the reference model (AdmitInput::ahead_ms, off at 0): a
// due call that only L1 holds back, at the head of the L1 line, whose
// refill comes within a = min(ahead_ms, kAdmitAheadCalls refills of its own
// need) is admitted at once with start_in_ms, the level going into a debt of
// at most C_d * a. The differential test checks the scripts against these rules.
#include <gtest/gtest.h>

#include <string>

#include "bp/gate_model.h"

namespace bp::gate_model {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

// 10 req/s and 1 000 tok/s with a 1 s bucket: capacity 10 requests and
// 1 000 tokens.
Model Target(double burst_s = 1) {
  Model m;
  Config c;
  c.requests_per_s = 10, c.tokens_per_s = 1000, c.burst_s = burst_s;
  m.Configure(c);
  return m;
}

// A call of one request; ahead_ms 100 unless given (below the 4 s of four
// 1 s buckets, so a = 100 ms).
AdmitOutput Call(Model& m, const std::string& tenant, int64_t tokens, int64_t now_ms,
                 int64_t ahead_ms = 100) {
  return m.Admit(
      {tenant, 1, 1, tokens, 0, Mode::kReconcile, Ablation::kNone, 10000, now_ms, ahead_ms});
}

TEST(GateModelAhead, OffDefersAsWithoutIt) {
  Model m = Target();
  EXPECT_EQ(Call(m, "a", 900, kT0, 0).verdict, Verdict::kAdmit);  // 1 000 -> 100 tokens
  // +100 ms: 100 -> 200 tokens, 250 needed: 50 ms of refill.
  const AdmitOutput d = Call(m, "a", 250, kT0 + 100, 0);
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 50);
  EXPECT_EQ(d.binding, "l1:tokens");
  EXPECT_EQ(d.start_in_ms, 0);
  EXPECT_EQ(m.state.g->t, 200);
}

TEST(GateModelAhead, ARefillWithinAIsAdmittedNowIntoDebt) {
  Model m = Target();
  EXPECT_EQ(Call(m, "a", 900, kT0).start_in_ms, 0);  // L1 holds it: no wait
  const AdmitOutput d = Call(m, "a", 250, kT0 + 100);
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_EQ(d.ticket, "2");
  EXPECT_EQ(d.start_in_ms, 50);  // when the level would have held 250
  EXPECT_EQ(m.state.g->t, -50);  // 200 -> -50 tokens: a debt of 50 <= 1 000 x 0.1 s
  EXPECT_EQ(m.state.g->r, 9);    // 9 + 1 (refill, capped at 10) -> 9 requests
  EXPECT_EQ(m.state.queues.at("1:a").admits, 2);
  // The next call waits for the debt and its own need: (50 + 100) / 1 000 s.
  const AdmitOutput e = Call(m, "a", 100, kT0 + 100);
  EXPECT_EQ(e.verdict, Verdict::kDefer);
  EXPECT_EQ(e.delta_ms, 150);
  EXPECT_EQ(e.binding, "l1:tokens");
}

TEST(GateModelAhead, ARefillBeyondAIsDeferred) {
  Model m = Target();
  EXPECT_EQ(Call(m, "a", 900, kT0).verdict, Verdict::kAdmit);  // 1 000 -> 100
  // 300 needed at 100: 200 ms > a.
  const AdmitOutput d = Call(m, "a", 300, kT0);
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 200);
  EXPECT_EQ(m.state.g->t, 100);
}

TEST(GateModelAhead, AIsAtMostFourOfTheCallsOwnCosts) {
  // 1 000 req/s and 1 000 tok/s, a 1 s bucket: tokens bind, and a call of c
  // tokens may start at most 4 c ms ahead (own refill c / 1 000 s).
  Model m;
  Config c;
  c.requests_per_s = 1000, c.tokens_per_s = 1000, c.burst_s = 1;
  m.Configure(c);
  EXPECT_EQ(AdmitAheadUs(1000, 20000), 80000);
  EXPECT_EQ(AdmitAheadUs(30, 20000), 30000);
  EXPECT_EQ(AdmitAheadUs(0, 20000), 0);
  EXPECT_EQ(Call(m, "a", 1000, kT0, 1000).verdict, Verdict::kAdmit);  // 1 000 -> 0 tokens
  // 20-token calls (a = 80 ms) wait for the debt and their own need: 20, 40,
  // 60, 80 ms.
  for (int64_t want : {20, 40, 60, 80}) {
    const AdmitOutput d = Call(m, "a", 20, kT0, 1000);
    EXPECT_EQ(d.verdict, Verdict::kAdmit) << want;
    EXPECT_EQ(d.start_in_ms, want);
  }
  EXPECT_EQ(m.state.g->t, -80);
  // A 40-token call may wait 160 ms: (80 + 40) / 1 000 s = 120 ms.
  const AdmitOutput big = Call(m, "a", 40, kT0, 1000);
  EXPECT_EQ(big.verdict, Verdict::kAdmit);
  EXPECT_EQ(big.start_in_ms, 120);
  EXPECT_EQ(m.state.g->t, -120);
  // A 10-token call only 40 ms: (120 + 10) / 1 000 s = 130 ms is too far.
  const AdmitOutput small = Call(m, "a", 10, kT0, 1000);
  EXPECT_EQ(small.verdict, Verdict::kDefer);
  EXPECT_EQ(small.delta_ms, 130);
  EXPECT_EQ(small.start_in_ms, 0);
}

TEST(GateModelAhead, ANegativeAheadIsAnError) {
  Model m = Target();
  const AdmitOutput d = Call(m, "a", 10, kT0, -1);
  EXPECT_EQ(d.verdict, Verdict::kError);
  EXPECT_EQ(d.reason, "ahead_ms must be an integer >= 0");
  EXPECT_FALSE(m.state.g.has_value());  // nothing written
}

TEST(GateModelAhead, ACallerKeptOutForTheHolderIsNotAdmittedAhead) {
  // Flat share rule: x (w_t 10) has a smaller finish tag than y (w_t 1).
  Model m = Target();
  Config c = m.config;
  c.share_rule = Config::ShareRule::kFlat;
  c.tenant_weights = {{"x", 10}};
  m.Configure(c);
  EXPECT_EQ(Call(m, "z", 1000, kT0).verdict, Verdict::kAdmit);  // 1 000 -> 0 tokens, V 0 -> 1
  // x needs 300: 300 ms > a; it takes the L1 hold, finish tag 1 + 0.3 / 10.
  const AdmitOutput x = Call(m, "x", 300, kT0);
  EXPECT_EQ(x.verdict, Verdict::kDefer);
  EXPECT_EQ(x.delta_ms, 300);
  EXPECT_EQ(m.state.hold->queue, "1:x");
  EXPECT_DOUBLE_EQ(m.state.hold->F, 1.03);
  // +250 ms, level 250: y (finish tag 1.1) leaves x's 300 in L1, so it waits
  // (40 + 300 - 250) / 1 000 s = 90 ms, within a; admitted now, its debit
  // would delay the holder's refill: deferred instead.
  const AdmitOutput y = Call(m, "y", 40, kT0 + 250);
  EXPECT_EQ(y.verdict, Verdict::kDefer);
  EXPECT_EQ(y.delta_ms, 90);
  EXPECT_EQ(y.binding, "l1:tokens");
  EXPECT_EQ(m.state.g->t, 250);
}

TEST(GateModelAhead, ACallAboveTheBucketWaitsForTheFullBucket) {
  // 1 200 tokens exceed the 1 000-token bucket: admitted only when it is
  // full (the debt rule), never ahead.
  Model m = Target();
  EXPECT_EQ(Call(m, "a", 50, kT0).verdict, Verdict::kAdmit);  // 1 000 -> 950
  const AdmitOutput d = Call(m, "a", 1200, kT0);
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 50);
}

}  // namespace
}  // namespace bp::gate_model
