// P4 (signed release, reservation refund, idempotence) and I2 (hot updates
// take effect on the next call), with exact levels via an explicit clock.
#include "bp/gate_admin.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GateRelease : public GateSuite {};

GateOptions Mode(GateMode m) {
  GateOptions o;
  o.mode = m;
  return o;
}

TEST_F(GateRelease, ReconcileDebitsTheDifferenceOnce) {
  auto gate = MakeGate(GateCaps{10, 1000, 1.0}, {}, Mode(GateMode::kReconcile));
  Decision d = gate->Admit(AdmitRequest{"a", 1, {1, 100}, 0, kT0});
  ASSERT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_tokens, 900, 1e-9);       // 1000 -> 900
  EXPECT_NEAR(GateAdmin(*gate).State()->queues[0].tag, 0.1, 1e-12);  // sigma 100/1000 = 0.1
  ASSERT_TRUE(gate->Release(d.ticket, {1, 300}, kT0).ok());
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_tokens, 700, 1e-9);       // 200 more
  EXPECT_NEAR(GateAdmin(*gate).State()->queues[0].tag, 0.3, 1e-12);  // sigma 0.3
  EXPECT_NEAR(GateAdmin(*gate).State()->class_tokens.at(0), 300,
              1e-9);  // class 1 total: 100 -> 300
  ASSERT_TRUE(gate->Release(d.ticket, {1, 300}, kT0).ok());
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_tokens, 700, 1e-9);  // idempotent
  EXPECT_EQ(gate->counters().releases, 2u);
}

TEST_F(GateRelease, ReconcileRefundsAndRefillsFirst) {
  auto gate = MakeGate(GateCaps{10, 1000, 1.0}, {}, Mode(GateMode::kReconcile));
  Decision d = gate->Admit(AdmitRequest{"a", 1, {1, 400}, 0, kT0});  // 1000 -> 600
  ASSERT_EQ(d.verdict, Verdict::kAdmit);
  ASSERT_TRUE(gate->Release(d.ticket, {1, 150}, kT0 + 100).ok());
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_tokens, 950, 1e-9);  // 600 + 100 refilled + 250 refunded
  ASSERT_TRUE(gate->Release(d.ticket, {1, 0}, kT0 + 100).ok());
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_tokens, 950, 1e-9);
}

TEST_F(GateRelease, ReservationDebitsMaxTokensAndRefundsTheUnused) {
  GateCaps caps{10, 1000, 1.0};
  caps.max_cost_tokens = 1000;  // the provider's limit per window
  auto gate = MakeGate(caps, {}, Mode(GateMode::kReservation));
  Decision d = gate->Admit(AdmitRequest{"a", 1, {1, 100}, 400, kT0});
  ASSERT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_tokens, 500, 1e-9);  // 100 prompt + 400 max_tokens
  // The fair tag is charged the estimate (100 / 1000), not the reservation.
  EXPECT_NEAR(GateAdmin(*gate).State()->queues[0].tag, 0.1, 1e-12);
  ASSERT_TRUE(gate->Release(d.ticket, {1, 250}, kT0).ok());
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_tokens, 750, 1e-9);  // 250 unused refunded
  EXPECT_NEAR(GateAdmin(*gate).State()->queues[0].tag, 0.25, 1e-12);
  // Reservation can reject what estimate mode would admit: 1100 > 1000.
  d = gate->Admit(AdmitRequest{"a", 1, {1, 100}, 1000, kT0});
  EXPECT_EQ(d.verdict, Verdict::kReject);
}

TEST_F(GateRelease, ReservationServesTheTokenCapByUsedTokens) {
  // Two backlogged tenants reserving 100 + 400 tokens and using 300. L1
  // debits 500 and refunds 200 at release, so the cap of 6000 tok/s carries
  // 20 calls/s; a fair rule paced by the reserved cost would hold them to
  // 6000 / 500 = 12 calls/s (3600 used tok/s, 60 % of the cap).
  auto gate = MakeGate(GateCaps{1000, 6000, 1.0}, {}, Mode(GateMode::kReservation));
  SimQueue a{"a", 1, 16, {1, 100}, 400, 300};
  SimQueue b{"b", 1, 16, {1, 100}, 400, 300};
  auto r = Simulate(*gate, {a, b}, 20'000, 5'000);
  const double used_tok_per_s = (r.admits[0] + r.admits[1]) * 300.0 / 15.0;
  EXPECT_GE(used_tok_per_s, 0.9 * 6000);
  EXPECT_LE(used_tok_per_s, 1.02 * 6000);
  EXPECT_NEAR(static_cast<double>(r.admits[0]) / static_cast<double>(r.admits[1]), 1.0, 0.05);
}

TEST_F(GateRelease, EstimateModeIgnoresRelease) {
  auto gate = MakeGate(GateCaps{10, 1000, 1.0}, {}, Mode(GateMode::kEstimate));
  Decision d = gate->Admit(AdmitRequest{"a", 1, {1, 100}, 0, kT0});
  ASSERT_EQ(d.verdict, Verdict::kAdmit);
  ASSERT_TRUE(gate->Release(d.ticket, {1, 900}, kT0).ok());
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_tokens, 900, 1e-9);
}

TEST_F(GateRelease, NoisyEstimatesReconcileToTheCap) {
  // Estimates of 100 tokens, actual 300: without release the gate would admit
  // 3x the token cap; with it, admitted actual tokens stay at the cap.
  auto gate = MakeGate(GateCaps{1000, 6000, 1.0}, {});
  SimQueue q{"a", 1, 32, {1, 100}, 0, 300};
  auto r = Simulate(*gate, {q}, 20'000, 5'000);
  const double actual_tok_per_s = r.admits[0] * 300.0 / 15.0;
  EXPECT_NEAR(actual_tok_per_s, 6000, 0.03 * 6000);
}

TEST_F(GateRelease, WeightsAndCapsChangeOnTheNextCall) {
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {1.0, 0.5});
  ASSERT_EQ(gate->Admit(AdmitRequest{"a", 2, {1, 0}, 0, kT0}).verdict, Verdict::kAdmit);
  auto st = GateAdmin(*gate).State();
  EXPECT_DOUBLE_EQ(st->queues[0].weight, 0.5);  // w_t 1 * omega_2 0.5
  EXPECT_NEAR(st->queues[0].tag, 0.2, 1e-12);   // quantum 0.1 / 0.5
  ASSERT_TRUE(GateAdmin(*gate).SetTenantWeight("a", 4).ok());
  ASSERT_TRUE(GateAdmin(*gate).SetPriorityWeights({1.0, 2.0}).ok());
  ASSERT_EQ(gate->Admit(AdmitRequest{"a", 2, {1, 0}, 0, kT0}).verdict, Verdict::kAdmit);
  st = GateAdmin(*gate).State();
  EXPECT_DOUBLE_EQ(st->queues[0].weight, 8);  // 4 * 2
  // Alone in its class: w_q = omega_2 w_t / W_2 = 2 * 4 / 4.
  EXPECT_NEAR(st->queues[0].tag, 0.2 + 0.1 / 2, 1e-12);
  ASSERT_TRUE(GateAdmin(*gate).UnsetTenantWeight("a").ok());
  ASSERT_EQ(gate->Admit(AdmitRequest{"a", 2, {1, 0}, 0, kT0}).verdict, Verdict::kAdmit);
  EXPECT_DOUBLE_EQ(GateAdmin(*gate).State()->queues[0].weight, 2);  // back to w_t = 1
  // Caps: 7 requests left; at 20 req/s 100 ms refill 2 (not 1).
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{20, 0, 1.0}).ok());
  ASSERT_EQ(gate->Admit(AdmitRequest{"a", 2, {1, 0}, 0, kT0 + 100}).verdict, Verdict::kAdmit);
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_requests, 8, 1e-9);  // 7 + 2 - 1
}

}  // namespace
}  // namespace bp::test
