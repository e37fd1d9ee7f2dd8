// A weight change through bpctl shifts admissions between two backlogged
// tenants while they run (I2, P2): a deterministic simulation of workers
// against the real admit script with an explicit clock, the weight changed
// half-way without a reset.
#include <queue>
#include <tuple>

#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

using bpctl::kExitOk;

// Workers call Admit back to back on simulated time: after ADMIT a call
// takes service_ms, after DEFER the worker sleeps exactly delta.
class WorkerSim {
 public:
  WorkerSim(Gate& gate, std::vector<std::string> tenants, int workers, int64_t service_ms)
      : gate_(gate), tenants_(std::move(tenants)), service_ms_(service_ms) {
    for (size_t q = 0; q < tenants_.size(); ++q) {
      for (int w = 0; w < workers; ++w) events_.emplace(kT0 + w, q);
    }
  }

  // Runs until `until_ms` and returns the admissions per tenant in
  // [from_ms, until_ms).
  std::vector<int64_t> Run(int64_t from_ms, int64_t until_ms) {
    std::vector<int64_t> admits(tenants_.size(), 0);
    while (!events_.empty() && std::get<0>(events_.top()) < until_ms) {
      auto [now, q] = events_.top();
      events_.pop();
      Decision d = gate_.Admit(AdmitRequest{tenants_[q], 1, Cost{1, 0}, 0, now});
      int64_t next = now + 1;
      if (d.verdict == Verdict::kAdmit) {
        admits[q] += now >= from_ms ? 1 : 0;
        next = now + service_ms_;
      } else if (d.verdict == Verdict::kDefer) {
        next = now + d.delta_ms;
      } else {
        ADD_FAILURE() << VerdictName(d.verdict) << ": " << d.reason;
        return admits;
      }
      events_.emplace(next, q);
    }
    return admits;
  }

 private:
  using Event = std::tuple<int64_t, size_t>;  // (time, tenant), a min-heap
  Gate& gate_;
  std::vector<std::string> tenants_;
  int64_t service_ms_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
};

class BpctlWeightShift : public BpctlSuite {};

TEST_F(BpctlWeightShift, SetWeightShiftsAdmissionsBetweenBackloggedTenants) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "1200"}).rc, kExitOk);  // 20 req/s
  auto gate = MakeGate();
  // 4 workers x 10 calls/s each: 40 req/s of demand per tenant, both backlogged.
  WorkerSim sim(gate->gate(), {"a", "b"}, 4, 100);
  std::vector<int64_t> before = sim.Run(kT0 + 2000, kT0 + 10000);
  ASSERT_EQ(Bpctl({"set", "weight", "a", "3"}).rc, kExitOk);
  std::vector<int64_t> after = sim.Run(kT0 + 12000, kT0 + 20000);
  // 8 s at 20 req/s = 160 admissions per window, split by weight: the
  // simulation is deterministic and the fair order exact here. After the
  // change the window also takes the bucket (20) that L1 refilled while the
  // weight change redrew the L1 line in the 2 s before it (28 admissions
  // there, 200 from 10 to 20 s: the cap): 172, at most 160 + 20 (P1).
  EXPECT_EQ(before, (std::vector<int64_t>{80, 80}));  // 1 : 1
  EXPECT_EQ(after, (std::vector<int64_t>{130, 42}));  // 3.1 : 1, from the next call on
  // Back to equal weights: the shares return.
  ASSERT_EQ(Bpctl({"unset", "weight", "a"}).rc, kExitOk);
  EXPECT_EQ(sim.Run(kT0 + 22000, kT0 + 30000), (std::vector<int64_t>{80, 80}));
}

}  // namespace
}  // namespace bp::test
