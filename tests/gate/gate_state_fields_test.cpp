// What state.lua answers so that no reader re-derives a rule (bpctl status,
// bpctl metrics): the levels refilled to the server's time, the refill rates,
// the capacities, the effective max costs and the shares of the share rule,
// each checked by exact arithmetic. Script times are put an hour after the
// server's clock so that no refill happens between the admission and the
// read (elapsed = max(0, now - last call) = 0), or left in the past so that
// the refill fills the bucket.
#include <memory>
#include <vector>

#include "bp/gate_admin.h"
#include "gate_fixture.h"

namespace bp::test {
namespace {

class GateStateFields : public GateSuite {
 protected:
  // A script time an hour after the server's clock.
  static int64_t Future(Gate& gate) {
    return static_cast<int64_t>(GateAdmin(gate).State()->server_time_ms) + 3'600'000;
  }

  // omega {0.6, 0.4}; a (class 1, w 1), b (class 2, w 1) and c (class 2,
  // w 3) backlogged: 1 request per second, burst 1, so a's first call
  // empties L1 and every later one is deferred.
  std::unique_ptr<Gate> Backlogged() {
    auto gate = MakeGate(GateCaps{1, 0, 1}, {0.6, 0.4});
    GateAdmin admin(*gate);
    EXPECT_TRUE(admin.SetTenantWeight("c", 3).ok());
    const int64_t t = Future(*gate);
    EXPECT_EQ(gate->Admit(AdmitRequest{"a", 1, {1, 0}, 0, t}).verdict, Verdict::kAdmit);
    for (const char* tenant : {"a", "b", "c"}) {
      const int k = tenant[0] == 'a' ? 1 : 2;
      EXPECT_EQ(gate->Admit(AdmitRequest{tenant, k, {1, 0}, 0, t}).verdict, Verdict::kDefer);
    }
    return gate;
  }
};

TEST_F(GateStateFields, LevelsRatesAndMaxCostsAreTheScriptsView) {
  auto gate = MakeGate(GateCaps{10, 100, 1}, {});
  auto st = GateAdmin(*gate).State();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  // Cold: full buckets; max costs one minute of cap; rates the caps.
  EXPECT_EQ(st->l1_requests_now, 10);
  EXPECT_EQ(st->l1_tokens_now, 100);
  EXPECT_EQ(st->l1_requests_capacity, 10);
  EXPECT_EQ(st->l1_tokens_capacity, 100);
  EXPECT_EQ(st->effective_max_cost_requests, 600);
  EXPECT_EQ(st->effective_max_cost_tokens, 6000);
  EXPECT_EQ(st->learned_requests_per_s, 10);
  EXPECT_EQ(st->learned_tokens_per_s, 100);
  EXPECT_FALSE(st->server.empty());
  // An admission in the future: no refill at the read.
  const int64_t t = Future(*gate);
  ASSERT_EQ(gate->Admit(AdmitRequest{"a", 1, {4, 30}, 0, t}).verdict, Verdict::kAdmit);
  st = GateAdmin(*gate).State();
  EXPECT_EQ(st->l1_requests_now, 6);  // 10 -> 6 requests
  EXPECT_EQ(st->l1_tokens_now, 70);   // 100 -> 70 tokens
  // An admission in the past: refilled to the capacity by now.
  auto past = MakeGate(GateCaps{10, 100, 1}, {});
  ASSERT_EQ(past->Admit(AdmitRequest{"a", 1, {4, 30}, 0, kT0}).verdict, Verdict::kAdmit);
  st = GateAdmin(*past).State();
  EXPECT_EQ(st->l1_requests, 6);  // as of the last call
  EXPECT_EQ(st->l1_requests_now, 10);
  EXPECT_EQ(st->l1_tokens_now, 100);
  // Configured max costs are answered as they are; a burst above one minute
  // raises the default to the capacity.
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{10, 100, 120, 50, 0}).ok());
  st = GateAdmin(*gate).State();
  EXPECT_EQ(st->effective_max_cost_requests, 50);
  EXPECT_EQ(st->effective_max_cost_tokens, 12000);  // 100 x 120 s > 100 x 60
  EXPECT_EQ(st->l1_tokens_capacity, 12000);
}

TEST_F(GateStateFields, SharesFollowTheShareRule) {
  auto gate = Backlogged();
  GateAdmin admin(*gate);
  auto st = admin.State();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->class_nominal_share, (std::vector<double>{0.6, 0.4}));
  // Hierarchical: class 1 gets 0.6, class 2 0.4 split 1 : 3 between b and c.
  EXPECT_EQ(st->class_current_share, (std::vector<double>{0.6, 0.4}));
  ASSERT_EQ(st->queues.size(), 3u);  // by priority, then tenant: a, b, c
  EXPECT_EQ(st->queues[0].fair_share, 0.6);
  EXPECT_DOUBLE_EQ(st->queues[1].fair_share, 0.1);
  EXPECT_DOUBLE_EQ(st->queues[2].fair_share, 0.3);
  EXPECT_EQ(st->queues[0].lag, st->queues[0].tag - st->virtual_time);
  // Flat: each queue by w_t * omega_k over the sum 0.6 + 0.4 + 1.2 = 2.2.
  GateTuning flat;
  flat.share_rule = GateTuning::ShareRule::kFlat;
  ASSERT_TRUE(admin.SetTuning(flat).ok());
  st = admin.State();
  EXPECT_DOUBLE_EQ(st->queues[0].fair_share, 0.6 / 2.2);
  EXPECT_DOUBLE_EQ(st->queues[1].fair_share, 0.4 / 2.2);
  EXPECT_DOUBLE_EQ(st->queues[2].fair_share, 1.2 / 2.2);
  EXPECT_DOUBLE_EQ(st->class_current_share[1], 1.6 / 2.2);
  // The summary has the shares per class, not the queues.
  auto summary = admin.StateSummary();
  ASSERT_TRUE(summary.ok());
  EXPECT_TRUE(summary->queues.empty());
  EXPECT_DOUBLE_EQ(summary->class_current_share[0], 0.6 / 2.2);
}

TEST_F(GateStateFields, ASetWeightShowsInTheShareBeforeTheNextAdmission) {
  // Class 2 backlogged with b (w 1) and c (w 3): W_2 = 4. Setting c's weight
  // to 1 changes no queue record until c's next admission; the state must
  // still answer the shares of the new weight.
  auto gate = Backlogged();
  GateAdmin admin(*gate);
  ASSERT_TRUE(admin.SetTenantWeight("c", 1).ok());
  auto st = admin.State();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->queues.size(), 3u);
  EXPECT_EQ(st->queues[2].weight, 0.4);      // w_c * omega_2 = 1 x 0.4
  EXPECT_EQ(st->queues[1].fair_share, 0.2);  // 0.4 x 1 / (4 + 1 - 3)
  EXPECT_EQ(st->queues[2].fair_share, 0.2);  // was 0.3 with w_c = 3
  // Flat: w_t omega_k over 0.6 x 1 + 0.4 x (1 + 1) = 1.4.
  GateTuning flat;
  flat.share_rule = GateTuning::ShareRule::kFlat;
  ASSERT_TRUE(admin.SetTuning(flat).ok());
  ASSERT_TRUE(admin.SetTenantWeight("a", 2).ok());  // 0.6 x 2 + 0.8 = 2
  st = admin.State();
  EXPECT_EQ(st->queues[0].fair_share, 0.6);  // 1.2 / 2
  EXPECT_EQ(st->queues[1].fair_share, 0.2);  // 0.4 / 2
  EXPECT_EQ(st->queues[2].fair_share, 0.2);
  EXPECT_EQ(st->class_current_share, (std::vector<double>{0.6, 0.4}));
}

}  // namespace
}  // namespace bp::test
