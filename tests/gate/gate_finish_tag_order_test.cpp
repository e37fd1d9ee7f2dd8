// Many single-caller queues against a few heavy ones (the scale scenario,
// where start-tag fair queuing starved the heavy ones): a deterministic simulation against the real
// admit script (gate_fixture.h). Every queue is backlogged from t = 0 (all arrive together, the
// worst case for start-tag fair queuing), so the weighted fair share is exact: C * w_q / sum(w).
#include <cstdio>
#include <string>
#include <vector>

#include "bp/gate_admin.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GateFinishTagOrder : public GateSuite {};

AdmitRequest At(const std::string& tenant, int64_t t_ms) {
  return AdmitRequest{tenant, 1, Cost{1, 0}, 0, kT0 + t_ms};
}

// 400 light queues (weight 1, one caller each) and 2 heavy ones (weight 100,
// 40 callers each) share 50 req/s for 40 s. Shares: a heavy 50 * 100 / 600 =
// 8.33 req/s, a light 0.083 req/s (one call per 12 s). Before the fix the
// heavies got about a tenth of that: the lights, all due at once, won L1's
// refills until each had been served (twice, with the slack of one quantum).
TEST_F(GateFinishTagOrder, HeavyQueuesKeepTheirShareAmongManyLightOnes) {
  auto gate = MakeGate(GateCaps{50, 0, 0.1}, {});
  constexpr int kLights = 400;
  constexpr int64_t kRunMs = 40'000, kWarmupMs = 4'000;
  std::vector<SimQueue> queues;
  for (int i = 0; i < kLights; ++i) queues.push_back({"light" + std::to_string(i), 1, 1, {1, 0}});
  for (const char* h : {"heavy0", "heavy1"}) {
    ASSERT_TRUE(GateAdmin(*gate).SetTenantWeight(h, 100).ok());
    queues.push_back({h, 1, 40, {1, 0}});
  }
  auto r = Simulate(*gate, queues, kRunMs, kWarmupMs);
  EXPECT_EQ(r.fail_opens, 0);
  const double span_s = (kRunMs - kWarmupMs) / 1000.0;
  int64_t light_admits = 0, calls = 0;
  for (int i = 0; i < kLights; ++i) light_admits += r.admits[i];
  for (int64_t c : r.calls) calls += c;
  const double h0 = r.admits[kLights] / span_s, h1 = r.admits[kLights + 1] / span_s;
  const double lights = light_admits / span_s;
  std::printf("  heavy req/s %.2f %.2f (share 8.33), lights %.2f (share 33.3), calls %lld\n", h0,
              h1, lights, static_cast<long long>(calls));
  EXPECT_NEAR(h0, 50.0 * 100 / 600, 0.1 * 50.0 * 100 / 600);
  EXPECT_NEAR(h1, 50.0 * 100 / 600, 0.1 * 50.0 * 100 / 600);
  EXPECT_NEAR(lights, 50.0 * 400 / 600, 0.1 * 50.0 * 400 / 600);
  EXPECT_LE(h0 + h1 + lights, 50.0 + 5.0 / span_s);  // P1: C * span + burst
}

// The L1 hold goes to the due caller with the smallest finish tag, and an
// eligible caller with a later (or the same) one leaves the holder's need in L1 (WF2Q+'s
// order among eligible callers). 10 req/s, burst 1 s; h has weight 10
// (quantum 0.01), l1 and l2 weight 1 (quantum 0.1).
// Under share_rule flat, so the weights are 10, 1 and 1 whoever is
// backlogged.
TEST_F(GateFinishTagOrder, TheEarliestFinishTagHoldsL1) {
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {});
  GateTuning flat;
  flat.share_rule = GateTuning::ShareRule::kFlat;
  ASSERT_TRUE(GateAdmin(*gate).SetTuning(flat).ok());
  ASSERT_TRUE(GateAdmin(*gate).SetTenantWeight("h", 10).ok());
  for (int i = 0; i < 10; ++i) ASSERT_EQ(gate->Admit(At("l1", 0)).verdict, Verdict::kAdmit);
  // L1 empty: l1 is due (tag 1.0) and holds L1 with finish tag 1.1; the L1
  // line ends at its wake-up, 100.
  EXPECT_EQ(gate->Admit(At("l1", 0)).delta_ms, 100);
  // h joins at V = 1.0 with finish tag 1.01 < 1.1: it takes the hold and the
  // next refill (100), and its request extends the line to 200.
  Decision d = gate->Admit(At("h", 0));
  EXPECT_EQ(d.delta_ms, 100);
  EXPECT_EQ(d.reason, "l1:requests");
  // l2 (finish 1.1), kept out by h's need, joins the L1 line: 200 + 100.
  EXPECT_EQ(gate->Admit(At("l2", 0)).delta_ms, 300);
  // A second caller of l2 lines up behind l2's promised wake-up (300) plus
  // one fair gap, 0.1 / X* with X* = 10 / 120 per s: 1 500 ms.
  EXPECT_EQ(gate->Admit(At("l2", 0)).delta_ms, 1500);
  // At 100 L1 holds 1, h's: l1 is kept out and joins the line's end (300)
  // for one more: 300 ms from now.
  d = gate->Admit(At("l1", 100));
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 300);
  EXPECT_EQ(gate->Admit(At("h", 100)).verdict, Verdict::kAdmit);
  // V advanced by 1 / D_r = 1 / (10 + 100 + 10); l1 and l2 keep their tag
  // 1.0 below V (owed), h's is 1.01.
  auto st = GateAdmin(*gate).State();
  ASSERT_TRUE(st.ok());
  EXPECT_NEAR(st->virtual_time, 1.0 + 1.0 / 120, 1e-12);
  ASSERT_EQ(st->queues.size(), 3u);
  for (const auto& q : st->queues) {
    EXPECT_NEAR(q.tag, q.tenant == "h" ? 1.01 : 1.0, 1e-12) << q.tenant;
    EXPECT_TRUE(q.backlogged) << q.tenant;
  }
  // The hold is free again: l1, due and short only on L1, takes it and the
  // next refill (the line, at 400, grows by its request to 500).
  EXPECT_EQ(gate->Admit(At("l1", 100)).delta_ms, 100);
  // At 200 L1 holds 1: l2 ties with the holder (finish 1.1) and leaves it
  // for l1, who was first. Kept out only by the holder's need, l2 takes a
  // place in the L1 line (500 + 100), not behind its queue's line (1 500 +
  // 1 200 ms).
  EXPECT_EQ(gate->Admit(At("l2", 200)).delta_ms, 400);
  EXPECT_EQ(gate->Admit(At("l1", 200)).verdict, Verdict::kAdmit);
}

}  // namespace
}  // namespace bp::test
