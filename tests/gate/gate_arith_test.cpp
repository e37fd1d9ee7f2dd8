// Exact bucket arithmetic on a controlled sequence. The script's clock is set
// explicitly (AdmitRequest::now_ms), so every level and delta is exact.
#include "bp/gate_admin.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GateArith : public GateSuite {};

AdmitRequest At(const std::string& tenant, int64_t t_ms, Cost cost = {1, 100}) {
  return AdmitRequest{tenant, 1, cost, 0, kT0 + t_ms};
}

TEST_F(GateArith, ColdBucketStartsFullThenRefillsAtCap) {
  auto gate = MakeGate(GateCaps{10, 1000, 1.0}, {});
  // Cold: L1 = 10 requests, 1000 tokens; ten calls of (1, 100) drain it.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(gate->Admit(At("a", 0)).verdict, Verdict::kAdmit) << i;
  }
  auto st = GateAdmin(*gate).State();
  ASSERT_TRUE(st.ok());
  EXPECT_NEAR(st->l1_requests, 0, 1e-9);  // 10 -> 0 requests
  EXPECT_NEAR(st->l1_tokens, 0, 1e-9);    // 1000 -> 0 tokens
  // Empty: one request refills in 1/10 s.
  Decision d = gate->Admit(At("a", 0));
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 100);
  EXPECT_EQ(d.reason, "l1:requests");
  // Half-way: 0.5 requests and 50 tokens. a holds L1 (due, finish tag 1.1)
  // and c's finish tag ties it, so c waits for a's cost and its own: 150 ms
  // (a's own callers line up behind its first deferral, see FairTags...).
  d = gate->Admit(At("c", 50));
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 150);
  EXPECT_EQ(gate->Admit(At("a", 100)).verdict, Verdict::kAdmit);  // 1 -> 0
  // Tokens bind: 300 tokens need 300 ms at 1000 tok/s, after the 100 tokens
  // the L1 line promised c at 200: 100 + 300 ms; requests only 100 ms.
  d = gate->Admit(At("a", 100, {1, 300}));
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 400);
  EXPECT_EQ(d.reason, "l1:tokens");
  // c never came back and a promise reserves nothing: at 400 L1 holds a's
  // 300 tokens.
  EXPECT_EQ(gate->Admit(At("a", 400, {1, 300})).verdict, Verdict::kAdmit);
  st = GateAdmin(*gate).State();
  EXPECT_NEAR(st->l1_requests, 2, 1e-9);  // 0 + 3 refilled - 1
  EXPECT_NEAR(st->l1_tokens, 0, 1e-9);    // 0 + 300 refilled - 300
  // A long idle span refills to the burst capacity, not beyond.
  EXPECT_EQ(gate->Admit(At("a", 60'000)).verdict, Verdict::kAdmit);
  st = GateAdmin(*gate).State();
  EXPECT_NEAR(st->l1_requests, 9, 1e-9);  // capped at 10, minus 1
  EXPECT_NEAR(st->l1_tokens, 900, 1e-9);  // capped at 1000, minus 100
}

TEST_F(GateArith, BurstSecondsScaleTheCapacity) {
  auto gate = MakeGate(GateCaps{10, 0, 0.5}, {});  // 5 requests of burst, no token dimension
  for (int i = 0; i < 5; ++i) EXPECT_EQ(gate->Admit(At("a", 0, {1, 0})).verdict, Verdict::kAdmit);
  Decision d = gate->Admit(At("a", 0, {1, 0}));
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 100);
}

TEST_F(GateArith, CostAboveTheProvidersLimitIsRejected) {
  GateCaps caps{10, 1000, 1.0};
  caps.max_cost_requests = 10;  // the provider's limits per window
  caps.max_cost_tokens = 1000;
  auto gate = MakeGate(caps, {});
  Decision d = gate->Admit(At("a", 0, {1, 1001}));
  EXPECT_EQ(d.verdict, Verdict::kReject);
  EXPECT_NE(d.reason.find("request too large: 1001 tokens exceed max_cost_tokens 1000"),
            std::string::npos)
      << d.reason;
  d = gate->Admit(At("a", 0, {11, 0}));
  EXPECT_EQ(d.verdict, Verdict::kReject);
  EXPECT_EQ(GateAdmin(*gate).State()->l1_requests, 10);  // nothing debited
}

// Under share_rule flat (one weight w_t omega_k per queue: a and b weigh 1
// each); the hierarchical default's tags are the model's table cases.
TEST_F(GateArith, FairTagsAndCalendarDeltas) {
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {});
  GateTuning flat;
  flat.share_rule = GateTuning::ShareRule::kFlat;
  ASSERT_TRUE(GateAdmin(*gate).SetTuning(flat).ok());
  // Alone, a takes the whole burst: tags 0 -> 1.0 (quantum 0.1 = (1/10)/1),
  // V follows its start tags to 0.9.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(gate->Admit(At("a", 0, {1, 0})).verdict, Verdict::kAdmit);
  // L1 empty: a is due, takes the L1 hold (finish tag 1.1) and joins the
  // backlog at S = 1.0.
  EXPECT_EQ(gate->Admit(At("a", 0, {1, 0})).delta_ms, 100);
  // b joins at V = 1.0 with finish tag 1.1, a tie with the holder: it waits
  // for a's request and its own.
  Decision d = gate->Admit(At("b", 0, {1, 0}));
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 200);
  // From here X* = 10 / (10 + 10) = 0.5 per s, slack = 50 ms * 0.5 = 0.025.
  // Each fair admission advances V by c / D_r = 1 / 20 = 0.05.
  EXPECT_EQ(gate->Admit(At("a", 100, {1, 0})).verdict, Verdict::kAdmit);  // F_a 1.1, V 1.05
  // L1 empty: b holds, taking the next refill (100 ms) ahead of the L1 line
  // (b's place at 200 from its first call); its request extends it to 300.
  EXPECT_EQ(gate->Admit(At("b", 100, {1, 0})).delta_ms, 100);
  // a: S - V = 0.05 > slack; L1 is empty too, and its request comes after
  // the refills promised up to 300: 300 ms > (0.05 - 0.025) / 0.5.
  EXPECT_EQ(gate->Admit(At("a", 100, {1, 0})).delta_ms, 300);
  // At 200 L1 holds 1, but a is still not eligible ((1.1 - 1.05 - 0.025) /
  // 0.5 = 50 ms), and it lines up behind its queue's last promised wake-up
  // (400) plus one fair gap, 0.1 / 0.5 s: 400 ms.
  d = gate->Admit(At("a", 200, {1, 0}));
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 400);
  EXPECT_EQ(d.reason, "fair");
  EXPECT_EQ(gate->Admit(At("b", 200, {1, 0})).verdict, Verdict::kAdmit);  // F_b 1.1, V 1.1
  // At 250 L1 holds 0.5: a is eligible (S = V = 1.1) and takes the hold for
  // the refill time, 50 ms; a second caller of a lines up behind a's last
  // promised wake-up (600) plus one fair gap, 0.1 / 0.5 s: 550 ms.
  d = gate->Admit(At("a", 250, {1, 0}));
  EXPECT_EQ(d.delta_ms, 50);
  EXPECT_EQ(d.reason, "l1:requests");
  EXPECT_EQ(gate->Admit(At("a", 250, {1, 0})).delta_ms, 550);
  EXPECT_EQ(gate->Admit(At("a", 300, {1, 0})).verdict, Verdict::kAdmit);  // F_a 1.2, V 1.15
  EXPECT_EQ(gate->Admit(At("b", 300, {1, 0})).delta_ms, 100);             // L1 empty
  auto st = GateAdmin(*gate).State();
  ASSERT_EQ(st->queues.size(), 2u);
  EXPECT_NEAR(st->queues[0].tag, 1.2, 1e-9);
  EXPECT_NEAR(st->queues[1].tag, 1.1, 1e-9);
  EXPECT_NEAR(st->virtual_time, 1.15, 1e-9);
  EXPECT_EQ(st->queues[0].admits, 12);
  EXPECT_EQ(st->queues[0].defers, 5);
  EXPECT_EQ(st->queues[1].admits, 1);
  EXPECT_EQ(st->queues[1].defers, 3);
  EXPECT_TRUE(st->queues[0].backlogged);
}

// The clock going back (a failover to a server whose clock is behind, or an
// explicit now_ms in the future) must not stop the refill until the clock
// passes the old time: beyond 1 s back the refill restarts from now, and a
// hold that far ahead holds nothing. Within 1 s, ts stays (no double refill).
TEST_F(GateArith, AClockThatWentBackRestartsTheRefill) {
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {});
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(gate->Admit(At("a", 100'000, {1, 0})).verdict, Verdict::kAdmit);
  // 0.5 s back: no refill, b holds L1 until 99.8 s.
  EXPECT_EQ(gate->Admit(At("b", 99'500, {1, 0})).delta_ms, 100);
  // 100 s back: the refill restarts at 0, b's hold (99.8 s ahead) is void,
  // so c takes the hold and is admitted after one refill, 100 ms.
  EXPECT_EQ(gate->Admit(At("c", 0, {1, 0})).delta_ms, 100);
  EXPECT_EQ(gate->Admit(At("c", 100, {1, 0})).verdict, Verdict::kAdmit);
  EXPECT_NEAR(GateAdmin(*gate).State()->l1_requests, 0, 1e-9);
}

TEST_F(GateArith, IdleQueuesAreEvictedAfterTheTtl) {
  GateOptions o;
  o.queue_ttl_ms = 1000;
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {}, o);
  EXPECT_EQ(gate->Admit(At("a", 0, {1, 0})).verdict, Verdict::kAdmit);
  EXPECT_EQ(gate->Admit(At("b", 500, {1, 0})).verdict, Verdict::kAdmit);
  EXPECT_EQ(GateAdmin(*gate).State()->queues.size(), 2u);
  EXPECT_EQ(gate->Admit(At("b", 1200, {1, 0})).verdict, Verdict::kAdmit);  // a idle 1.2 s
  auto st = GateAdmin(*gate).State();
  ASSERT_EQ(st->queues.size(), 1u);
  EXPECT_EQ(st->queues[0].tenant, "b");
}

TEST_F(GateArith, UnconfiguredTargetFailsOpenWithReason) {
  auto gate = MakeGate();
  Decision d = gate->Admit(At("a", 0));
  EXPECT_EQ(d.verdict, Verdict::kFailOpen);
  EXPECT_NE(d.reason.find("not configured"), std::string::npos) << d.reason;
  EXPECT_EQ(gate->fail_open_count(), 1u);
}

TEST_F(GateArith, BadConfigurationFailsWithItsMessage) {
  auto gate = MakeGate();
  Status s = GateAdmin(*gate).SetCaps(GateCaps{-1, 0, 1});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("requests_per_s"), std::string::npos);
  EXPECT_EQ(GateAdmin(*gate).SetCaps(GateCaps{10, 0, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GateAdmin(*gate).SetPriorityWeights({0.5, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GateAdmin(*gate).SetPriorityWeights({}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GateAdmin(*gate).SetTenantWeight("a", -2).code(), StatusCode::kInvalidArgument);
  GateTuning t;
  t.lend_fraction = 2;
  EXPECT_EQ(GateAdmin(*gate).SetTuning(t).code(), StatusCode::kInvalidArgument);
  Decision d = gate->Admit(AdmitRequest{"bad tenant!", 1, {1, 0}, 0, 0});
  EXPECT_EQ(d.verdict, Verdict::kReject);
}

// class_policy strict through the client: stored, read back, and applied by
// the script (the model's table cases hold the exact rule): while class 1 is
// backlogged, class 2 is deferred with binding "strict" until class 1's
// promise plus grace (100 + 200 ms) ends, then served.
TEST_F(GateArith, StrictClassPolicyDefersALowerClass) {
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {});
  GateTuning strict;
  strict.class_policy = GateTuning::ClassPolicy::kStrict;
  ASSERT_TRUE(GateAdmin(*gate).SetTuning(strict).ok());
  ASSERT_TRUE(GateAdmin(*gate).SetPriorityWeights({0.5, 0.5}).ok());
  EXPECT_EQ(GateAdmin(*gate).Config()->tuning.class_policy, GateTuning::ClassPolicy::kStrict);
  EXPECT_EQ(gate->Admit(At("z", 0, {10, 0})).verdict, Verdict::kAdmit);  // 10 -> 0
  EXPECT_EQ(gate->Admit(At("a", 0, {1, 0})).delta_ms, 100);              // class 1 waits for L1
  AdmitRequest low = At("b", 0, {1, 0});
  low.priority = 2;
  Decision d = gate->Admit(low);
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.reason, "strict");
  EXPECT_EQ(d.delta_ms, 300);
  low.now_ms = kT0 + 300;  // class 1's backlog expired: 3 requests refilled
  EXPECT_EQ(gate->Admit(low).verdict, Verdict::kAdmit);
}

}  // namespace
}  // namespace bp::test
