// The scripts' running totals (prelude.lua, NTAIL and the n:* fields; read
// through GateAdmin::State): every verdict and release counted once, in its
// class, with exact token sums under an explicit clock, kept across the
// eviction of another class's queue, and dropped by ResetBuckets.
#include <map>

#include "bp/gate_admin.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GateCounterTotals : public GateSuite {};

TEST_F(GateCounterTotals, AdmitsReleasesAndRejectsAreCountedExactly) {
  GateCaps caps{2, 1000, 1.0};  // B_r = 2 requests, B_t = 1000 tokens
  auto gate = MakeGate(caps, {0.6, 0.4});
  Decision a = gate->Admit(AdmitRequest{"a", 1, {1, 100}, 0, kT0});  // r 2 -> 1, t 1000 -> 900
  Decision b = gate->Admit(AdmitRequest{"b", 2, {1, 300}, 0, kT0});  // r 1 -> 0, t 900 -> 600
  ASSERT_EQ(a.verdict, Verdict::kAdmit);
  ASSERT_EQ(b.verdict, Verdict::kAdmit);
  Decision d = gate->Admit(AdmitRequest{"a", 1, {1, 100}, 0, kT0});  // r = 0: L1 binds
  ASSERT_EQ(d.verdict, Verdict::kDefer);
  EXPECT_EQ(d.reason, "l1:requests");
  // REJECTs: class 3 is not configured; 70 000 tokens exceed one minute of cap.
  EXPECT_EQ(gate->Admit(AdmitRequest{"a", 3, {1, 10}, 0, kT0}).verdict, Verdict::kReject);
  EXPECT_EQ(gate->Admit(AdmitRequest{"a", 1, {1, 70000}, 0, kT0}).verdict, Verdict::kReject);
  ASSERT_TRUE(gate->Release(a.ticket, {1, 40}, kT0).ok());   // 60 refunded
  ASSERT_TRUE(gate->Release(b.ticket, {1, 350}, kT0).ok());  // 50 surcharged
  ASSERT_TRUE(gate->Release(b.ticket, {1, 999}, kT0).ok());  // a second release: no-op

  auto st = GateAdmin(*gate).State();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->class_counters.size(), 2u);
  const GateClassCounters& c1 = st->class_counters[0];
  const GateClassCounters& c2 = st->class_counters[1];
  EXPECT_EQ(c1.admits, 1);
  EXPECT_EQ(c1.admitted_requests, 1);
  EXPECT_EQ(c1.admitted_tokens, 100);
  EXPECT_EQ(c1.defers_l1_requests, 1);
  EXPECT_EQ(c1.defers_fair + c1.defers_l1_tokens + c1.defers_strict, 0);
  EXPECT_EQ(c1.releases, 1);
  EXPECT_EQ(c1.released_tokens, 40);
  EXPECT_EQ(c1.refunded_tokens, 60);  // 100 debited - 40 used
  EXPECT_EQ(c1.surcharged_tokens, 0);
  EXPECT_EQ(c2.admits, 1);
  EXPECT_EQ(c2.admitted_tokens, 300);
  EXPECT_EQ(c2.releases, 1);  // the second release of b's ticket found nothing
  EXPECT_EQ(c2.released_tokens, 350);
  EXPECT_EQ(c2.surcharged_tokens, 50);  // 350 used - 300 debited
  EXPECT_EQ(c2.refused, 0);
  EXPECT_EQ(st->rejects_priority, 1);
  EXPECT_EQ(st->rejects_too_large, 1);
  // The release-corrected totals move both ways; the counters only grow.
  EXPECT_EQ(st->class_tokens[0], 40);   // 100 - 60
  EXPECT_EQ(st->class_tokens[1], 350);  // 300 + 50

  ASSERT_TRUE(GateAdmin(*gate).ResetBuckets().ok());
  st = GateAdmin(*gate).State();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->class_counters[0].admits, 0);  // dropped with the class records
  EXPECT_EQ(st->rejects_priority, 0);
}

TEST_F(GateCounterTotals, VerdictsOfASimulatedRunMatchTheCountersPerClassAndBinding) {
  // Overloaded: 2 requests/s against 6 queues of 2 classes, 20 s of simulated
  // workers; every verdict the workers saw is tallied here and compared with
  // the script's totals. A refused release is counted as such, not as tokens.
  GateCaps caps{2, 400, 1.0};
  auto gate = MakeGate(caps, {0.7, 0.3});
  std::map<int, std::map<std::string, int>> seen;  // class -> verdict/binding -> count
  std::map<int, int> refused, released_tokens;
  const std::string tenants[] = {"t0", "t1", "t2", "t3", "t4", "t5"};
  int64_t now = kT0;
  for (int step = 0; step < 400; ++step, now += 50) {
    const int q = step % 6;
    const int k = 1 + q % 2;
    Decision d = gate->Admit(AdmitRequest{tenants[q], k, {1, 60}, 0, now});
    if (d.verdict == Verdict::kAdmit) {
      ++seen[k]["admit"];
      if (step % 7 == 0) {
        ASSERT_TRUE(gate->ReleaseRefused(d.ticket, now).ok());
        ++refused[k];
      } else {
        ASSERT_TRUE(gate->Release(d.ticket, {1, 45}, now).ok());  // 15 refunded each
        released_tokens[k] += 45;
      }
    } else {
      ASSERT_EQ(d.verdict, Verdict::kDefer);
      ++seen[k][d.reason];
    }
  }
  auto st = GateAdmin(*gate).State();
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->class_counters.size(), 2u);
  for (int k = 1; k <= 2; ++k) {
    const GateClassCounters& c = st->class_counters[static_cast<size_t>(k - 1)];
    SCOPED_TRACE(::testing::Message() << "class " << k);
    EXPECT_GT(seen[k]["admit"], 0);
    EXPECT_EQ(c.admits, seen[k]["admit"]);
    EXPECT_EQ(c.admitted_tokens, 60.0 * seen[k]["admit"]);
    EXPECT_EQ(c.defers_fair, seen[k]["fair"]);
    EXPECT_EQ(c.defers_l1_requests, seen[k]["l1:requests"]);
    EXPECT_EQ(c.defers_l1_tokens, seen[k]["l1:tokens"]);
    EXPECT_EQ(c.releases, seen[k]["admit"]);
    EXPECT_EQ(c.refused, refused[k]);
    EXPECT_EQ(c.released_tokens, released_tokens[k]);
    EXPECT_EQ(c.refunded_tokens, 15.0 * (seen[k]["admit"] - refused[k]));
  }
  EXPECT_GT(seen[1]["fair"] + seen[2]["fair"], 0);  // the fair rule bound some calls
}

}  // namespace
}  // namespace bp::test
