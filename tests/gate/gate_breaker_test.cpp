// The circuit breaker (bp/circuit_breaker.h): its state machine on a
// FakeClock, and a Gate's breaker against a real server paused with
// CLIENT PAUSE WRITE (which holds EVALSHA until CLIENT UNPAUSE). Time is a
// FakeClock, so the cool-off ends exactly when the test says; assertions
// are on counts (timeouts, skips, fail-opens), never on wall time.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bp/circuit_breaker.h"
#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

TEST(CircuitBreaker, OpensOnFailureProbesOnceAfterTheCoolOffAndClosesOnSuccess) {
  FakeClock clock(1'000'000);
  CircuitBreaker b(1000, clock);
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_TRUE(b.Allow());
  b.OnFailure();  // closed -> open at t = 1 s
  EXPECT_EQ(b.state(), BreakerState::kOpen);
  EXPECT_EQ(b.opens(), 1u);
  EXPECT_FALSE(b.Allow());
  clock.AdvanceMs(999);  // 1 ms short of the cool-off
  EXPECT_FALSE(b.Allow());
  clock.AdvanceMs(1);
  EXPECT_TRUE(b.Allow());  // the probe: open -> half-open
  EXPECT_EQ(b.state(), BreakerState::kHalfOpen);
  EXPECT_FALSE(b.Allow());  // one probe at a time
  b.OnFailure();            // the probe failed: open again, cool-off from now
  EXPECT_EQ(b.opens(), 2u);
  clock.AdvanceMs(999);
  EXPECT_FALSE(b.Allow());
  clock.AdvanceMs(1);
  EXPECT_TRUE(b.Allow());
  b.OnSuccess();  // half-open -> closed
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_TRUE(b.Allow());
  EXPECT_TRUE(b.Allow());
  EXPECT_EQ(b.opens(), 2u);
}

TEST(CircuitBreaker, AbandonedProbeAndLateFailures) {
  FakeClock clock(0);
  CircuitBreaker b(500, clock);
  b.OnFailure();
  b.OnFailure();  // already open: no second open, cool-off not restarted
  EXPECT_EQ(b.opens(), 1u);
  clock.AdvanceMs(500);
  EXPECT_TRUE(b.Allow());
  b.Abandon();  // the probe made no call: open, and the next caller probes
  EXPECT_EQ(b.state(), BreakerState::kOpen);
  EXPECT_TRUE(b.Allow());
  b.OnSuccess();
  b.Abandon();  // not half-open: no change
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_EQ(b.opens(), 1u);
  b.OnFailure();
  b.OnSuccess();  // any answer closes it, even while open
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_EQ(b.opens(), 2u);
}

TEST(CircuitBreaker, ZeroCoolOffIsNoBreaker) {
  FakeClock clock(0);
  CircuitBreaker b(0, clock);
  b.OnFailure();
  EXPECT_TRUE(b.Allow());
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_EQ(b.opens(), 0u);
  EXPECT_STREQ(BreakerStateName(BreakerState::kHalfOpen), "half-open");
}

class GateBreaker : public GateSuite {
 protected:
  // CLIENT PAUSE WRITE for at most 30 s (a bound if the test dies), ended by
  // Unpause() or at the end of the test.
  void Pause() {
    auto r = admin_.Command({"CLIENT", "PAUSE", "30000", "WRITE"});
    ASSERT_TRUE(r.ok() && !r->is_error()) << (r.ok() ? r->str : r.status().ToString());
  }
  void Unpause() {
    auto r = admin_.Command({"CLIENT", "UNPAUSE"});
    ASSERT_TRUE(r.ok() && !r->is_error()) << (r.ok() ? r->str : r.status().ToString());
  }
  void TearDown() override { admin_.Command({"CLIENT", "UNPAUSE"}); }

  // A gate on clock_ with this command timeout (`options` gives the rest),
  // configured for 1000 req/s.
  std::unique_ptr<Gate> PausableGate(int command_timeout_ms, GateOptions options = {}) {
    options.clock = &clock_;
    options.command_timeout_ms = command_timeout_ms;
    auto gate = MakeGate(options, /*generous_timeout=*/false);
    EXPECT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());
    return gate;
  }

  ValkeyConnection admin_{ValkeyOptions{server_->url(), 1000, 2000}};
  FakeClock clock_{1'000'000};  // the breaker's cool-off ends only when told
};

AdmitRequest Req() { return AdmitRequest{"a", 1, {1, 0}, 0, 0}; }

TEST_F(GateBreaker, PausedServerCostsOneTimeoutPerCoolOff) {
  GateOptions o;
  o.breaker_cool_off_ms = 1000;
  auto gate = PausableGate(500, o);  // 500 ms: long enough for a loaded box
  Decision first = gate->Admit(Req());
  ASSERT_EQ(first.verdict, Verdict::kAdmit) << first.reason;

  Pause();
  // The first call waits its timeout and opens the breaker; the next 20
  // Admits and a Release are answered by the breaker without a call.
  Decision d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kFailOpen);
  EXPECT_NE(d.reason.find("no answer within 500 ms"), std::string::npos) << d.reason;
  EXPECT_EQ(gate->breaker_state(), BreakerState::kOpen);
  for (int i = 0; i < 20; ++i) {
    d = gate->Admit(Req());
    ASSERT_EQ(d.verdict, Verdict::kFailOpen);
    EXPECT_NE(d.reason.find("circuit breaker open"), std::string::npos) << d.reason;
  }
  Status released = gate->Release(first.ticket, Cost{1, 0});
  EXPECT_EQ(released.code(), StatusCode::kUnavailable);
  GateCounters c = gate->counters();
  EXPECT_EQ(c.timeouts, 1u);
  EXPECT_EQ(c.connection_errors, 0u);
  EXPECT_EQ(c.breaker_opens, 1u);
  EXPECT_EQ(c.breaker_skips, 21u);  // 20 Admits + 1 Release
  EXPECT_EQ(c.fail_opens, 21u);
  EXPECT_EQ(c.release_errors, 1u);

  // Still paused after the cool-off: one probe waits its timeout, fails,
  // and the breaker opens again.
  clock_.AdvanceMs(1000);
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);  // the probe
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);  // skipped
  c = gate->counters();
  EXPECT_EQ(c.timeouts, 2u);
  EXPECT_EQ(c.breaker_opens, 2u);
  EXPECT_EQ(c.breaker_skips, 22u);
  EXPECT_EQ(c.fail_opens, 23u);

  // Pause over: within the cool-off calls still fail open without a call;
  // after it the probe is admitted, the breaker closes and gating resumes.
  Unpause();
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);
  clock_.AdvanceMs(1000);
  d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kAdmit) << d.reason;
  EXPECT_EQ(gate->breaker_state(), BreakerState::kClosed);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kAdmit);
  EXPECT_TRUE(gate->Release(first.ticket, Cost{1, 0}).ok());
  c = gate->counters();
  EXPECT_EQ(c.timeouts, 2u);
  EXPECT_EQ(c.breaker_opens, 2u);
  EXPECT_EQ(c.breaker_skips, 23u);
  EXPECT_EQ(c.fail_opens, 24u);
  EXPECT_EQ(c.admits, 7u);  // 1 before, the probe, 5 after
  EXPECT_EQ(c.releases, 1u);
}

TEST_F(GateBreaker, WithoutABreakerEveryCallWaitsItsTimeout) {
  GateOptions o;
  o.breaker_cool_off_ms = 0;
  o.reconnect_interval_ms = 0;  // each call reconnects to the paused server
  auto gate = PausableGate(200, o);
  Pause();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);
  GateCounters c = gate->counters();
  EXPECT_EQ(c.timeouts, 3u);  // the collapse the breaker prevents
  EXPECT_EQ(c.breaker_opens, 0u);
  EXPECT_EQ(c.breaker_skips, 0u);
  Unpause();
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kAdmit);
}

TEST_F(GateBreaker, AToolCallThatSucceedsClosesTheBreaker) {
  auto gate = PausableGate(500);
  Pause();
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);  // timeout: open
  EXPECT_EQ(gate->breaker_state(), BreakerState::kOpen);
  Unpause();
  // An operator's hot update through the same Gate answers: closed at once,
  // without waiting for the cool-off.
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());
  EXPECT_EQ(gate->breaker_state(), BreakerState::kClosed);
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kAdmit);
  EXPECT_EQ(gate->counters().breaker_skips, 0u);
}

// Two threads share one Gate: the second queues behind the first's call on
// the Gate's mutex; once that call times out and opens the breaker, the
// second fails open without a timeout of its own. Whichever order the
// threads take, the counts are the same.
TEST_F(GateBreaker, ASharedGateWaitsOneTimeoutNotOnePerCaller) {
  auto gate = PausableGate(500);
  Pause();
  Decision first, second;
  std::thread a([&] { first = gate->Admit(Req()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // order only
  std::thread b([&] { second = gate->Admit(Req()); });
  a.join();
  b.join();
  EXPECT_EQ(first.verdict, Verdict::kFailOpen);
  EXPECT_EQ(second.verdict, Verdict::kFailOpen);
  const GateCounters c = gate->counters();
  EXPECT_EQ(c.timeouts, 1u);
  EXPECT_EQ(c.breaker_opens, 1u);
  EXPECT_EQ(c.breaker_skips, 1u);
  EXPECT_EQ(c.fail_opens, 2u);
}

}  // namespace
}  // namespace bp::test
