// Hot updates through bpctl, seen by the gate on its very next call (I2):
// caps change ADMIT/DEFER and delta, weights change the next quantum
// sigma / (w_t * omega_k), reset drops state but keeps configuration.
// Script clocks are explicit (AdmitRequest::now_ms), so values are exact.
#include "bp/valkey.h"
#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

using bpctl::kExitOk;
using bpctl::kExitUsage;

class BpctlUpdate : public BpctlSuite {
 protected:
  Decision Admit(GateAdmin& g, const std::string& tenant, int64_t now_ms, int64_t tokens = 0,
                 int priority = 1) {
    return g.gate().Admit(AdmitRequest{tenant, priority, Cost{1, tokens}, 0, now_ms});
  }
  double Tag(GateAdmin& g, const std::string& tenant) {
    const auto st = g.State();  // (a range-for over a temporary's member dangles)
    for (const auto& q : st->queues) {
      if (q.tenant == tenant) return q.tag;
    }
    return -1;
  }
};

TEST_F(BpctlUpdate, SetCapChangesTheNextDecision) {
  auto g = MakeGate();
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);  // 10 req/s, capacity 10
  for (int i = 0; i < 10; ++i) ASSERT_EQ(Admit(*g, "a", kT0).verdict, Verdict::kAdmit);  // 10 -> 0
  // 1 req/s, capacity 1: 100 ms refill 0.1 request (at 10/s it would be 1: ADMIT).
  BpctlRun r = Bpctl({"set", "cap", "--rpm", "60"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": caps 1 req/s (60 rpm), no token cap, burst 1 s\n");
  Decision d = Admit(*g, "a", kT0 + 100);
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 900);  // 0.1 -> 1 request at 1/s
  EXPECT_EQ(d.reason, "l1:requests");
  // Back to 10 req/s: 0.1 + 10 * 0.1 s = 1.1 requests (at 1/s it would be 0.2: DEFER).
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  EXPECT_EQ(Admit(*g, "a", kT0 + 200).verdict, Verdict::kAdmit);
  EXPECT_NEAR(g->State()->l1_requests, 0.1, 1e-9);  // 1.1 -> 0.1
  // A token cap of 10 tok/s appears: its bucket fills from 0 at 10/s since the
  // last call, 0.1 s -> 1 token; 10 tokens need 0.9 s more.
  ASSERT_EQ(Bpctl({"set", "cap", "--tpm", "600"}).rc, kExitOk);
  d = Admit(*g, "b", kT0 + 300, 10);
  EXPECT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.delta_ms, 900);
  EXPECT_EQ(d.reason, "l1:tokens");
}

TEST_F(BpctlUpdate, OmittedCapFlagsKeepTheirValues) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "3600", "--tpm", "720000", "--burst-s", "0.5"}).rc,
            kExitOk);
  BpctlRun r = Bpctl({"set", "cap", "--tpm", "60000"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ +
                       ": caps 60 req/s (3600 rpm), 1000 tok/s (60000 tpm), burst 0.5 s\n");
  auto caps = MakeGate()->Config()->caps;
  EXPECT_EQ(caps.requests_per_s, 60);  // 3600 / 60
  EXPECT_EQ(caps.tokens_per_s, 1000);  // 60000 / 60
  EXPECT_EQ(caps.burst_s, 0.5);
  ASSERT_EQ(Bpctl({"set", "cap", "--tpm", "0"}).rc, kExitOk);  // no token dimension
  EXPECT_EQ(MakeGate()->Config()->caps.tokens_per_s, 0);
}

TEST_F(BpctlUpdate, CapsOnAnUnconfiguredTargetNeedRpm) {
  BpctlRun r = Bpctl({"set", "cap", "--burst-s", "2"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("has no caps yet: give --rpm"), std::string::npos) << r.err;
  EXPECT_EQ(Snapshot(), "");
}

// Under share_rule flat, where a lone tenant's own weight shows in its
// quantum (hierarchical: it is alone in its class, w_t / W_1 = 1).
TEST_F(BpctlUpdate, WeightsChangeTheNextQuantum) {
  auto g = MakeGate();
  GateTuning flat;
  flat.share_rule = GateTuning::ShareRule::kFlat;
  ASSERT_TRUE(g->SetTuning(flat).ok());
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);  // sigma = 1/10 per request
  ASSERT_EQ(Bpctl({"set", "priority-weights", "0.5,0.25"}).rc, kExitOk);
  ASSERT_EQ(Admit(*g, "a", kT0).verdict, Verdict::kAdmit);
  EXPECT_NEAR(Tag(*g, "a"), 0.2, 1e-12);  // 0 + 0.1 / (1 * 0.5)
  BpctlRun r = Bpctl({"set", "weight", "a", "4"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": tenant a weight 4\n");
  ASSERT_EQ(Admit(*g, "a", kT0).verdict, Verdict::kAdmit);
  EXPECT_NEAR(Tag(*g, "a"), 0.25, 1e-12);  // + 0.1 / (4 * 0.5)
  r = Bpctl({"set", "priority-weights", "0.1,0.25"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": priority weights omega_1 = 0.1, omega_2 = 0.25\n");
  ASSERT_EQ(Admit(*g, "a", kT0).verdict, Verdict::kAdmit);
  EXPECT_NEAR(Tag(*g, "a"), 0.5, 1e-12);  // + 0.1 / (4 * 0.1)
  r = Bpctl({"unset", "weight", "a"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": tenant a weight unset (back to 1)\n");
  ASSERT_EQ(Admit(*g, "a", kT0).verdict, Verdict::kAdmit);
  EXPECT_NEAR(Tag(*g, "a"), 1.5, 1e-12);  // + 0.1 / (1 * 0.1)
  EXPECT_TRUE(MakeGate()->Config()->tenant_weights.empty());
}

// The echo of a weight is the plain decimal the flag takes, never an
// exponent the strict parser would refuse if typed back.
TEST_F(BpctlUpdate, WeightsAreEchoedAsThePlainDecimalsTheFlagsTake) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  BpctlRun r = Bpctl({"set", "weight", "a", "1000000"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": tenant a weight 1000000\n");
  r = Bpctl({"set", "weight", "a", "0.000001"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": tenant a weight 0.000001\n");
  r = Bpctl({"set", "priority-weights", "0.000001,1000000"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "target " + target_ + ": priority weights omega_1 = 0.000001, omega_2 = 1000000\n");
}

TEST_F(BpctlUpdate, FewerPriorityWeightsRemoveTheOtherClasses) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "priority-weights", "0.5,0.3,0.2"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "priority-weights", "0.6,0.4"}).rc, kExitOk);
  EXPECT_EQ(Export()["priority_weights"], nlohmann::ordered_json::parse("[0.6,0.4]"));
  // No trace of class 3: the keys hold what a target given 0.6,0.4 alone holds.
  const std::string twice = target_;
  target_ += "-once";
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "priority-weights", "0.6,0.4"}).rc, kExitOk);
  EXPECT_EQ(SnapshotAs(twice), SnapshotAs(target_));
}

TEST_F(BpctlUpdate, ResetBucketsKeepsTheConfiguration) {
  auto g = MakeGate();
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "60"}).rc, kExitOk);  // capacity 1
  ASSERT_EQ(Bpctl({"set", "weight", "a", "2"}).rc, kExitOk);
  Decision first = Admit(*g, "a", kT0);
  ASSERT_EQ(first.verdict, Verdict::kAdmit);
  EXPECT_EQ(first.ticket, "1");
  ASSERT_EQ(Admit(*g, "a", kT0).verdict, Verdict::kDefer);  // 1 -> 0 requests
  const auto config = Export();
  ASSERT_EQ(g->State()->queues.size(), 1u);
  BpctlRun r = Bpctl({"reset", "--buckets"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": bucket and queue state dropped, configuration kept\n");
  EXPECT_EQ(Export(), config);
  auto st = g->State();
  EXPECT_TRUE(st->queues.empty());
  EXPECT_EQ(st->class_requests.at(0), 0);
  EXPECT_EQ(st->virtual_time, 0);
  const std::string keys = Snapshot();
  auto names = KeyNames();
  for (const std::string& gone : {names["ticket_prefix"] + "1", names["backlog"], names["expiry"],
                                  names["seen"], std::string("q:1:a"), std::string("c:1")}) {
    EXPECT_EQ(keys.find(gone), std::string::npos) << gone << "\n" << keys;
  }
  // Full bucket again at the same script time; the ticket counter goes on.
  Decision again = Admit(*g, "a", kT0);
  ASSERT_EQ(again.verdict, Verdict::kAdmit);
  EXPECT_EQ(again.ticket, "2");
  EXPECT_TRUE(g->gate().Release("1", Cost{1, 0}, kT0).ok());  // dropped ticket: a no-op
  EXPECT_NEAR(g->State()->l1_requests, 0, 1e-12);
  EXPECT_EQ(Bpctl({"reset"}).rc, kExitOk);  // --buckets is the default
  EXPECT_EQ(Export(), config);
}

TEST_F(BpctlUpdate, ResetAllDeletesEverything) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "60"}).rc, kExitOk);
  ASSERT_EQ(MakeGate()->gate().Admit(AdmitRequest{"a", 1, Cost{1, 0}, 0, kT0}).verdict,
            Verdict::kAdmit);
  BpctlRun r = Bpctl({"reset", "--all"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": every key deleted (configuration included)\n");
  EXPECT_EQ(Snapshot(), "");
  BpctlRun e = Bpctl({"export"});
  EXPECT_EQ(e.rc, kExitOk);
  EXPECT_TRUE(nlohmann::json::parse(e.out)["caps"].is_null());
  EXPECT_NE(e.err.find("has no caps"), std::string::npos);
}

}  // namespace
}  // namespace bp::test
