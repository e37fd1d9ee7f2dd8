// The gate's own intervals (reconnect attempts, fail-open warnings) run on
// the injected bp::Clock (GateOptions::clock): a FakeClock that does not move
// holds them, whatever real time passes; moving it past the interval
// releases them. Real Valkey (tests/support), exact counts.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "bp/clock.h"
#include "bp/gate_admin.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GateClock : public GateSuite {};

AdmitRequest Req() { return AdmitRequest{"a", 1, {1, 0}, 0, 0}; }

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; ++pos) ++n;
  return n;
}

TEST_F(GateClock, ReconnectWaitsForTheInjectedClockNotRealTime) {
  FakeClock clock(1'000'000);
  GateOptions o;
  o.clock = &clock;
  o.reconnect_interval_ms = 100;
  o.breaker_cool_off_ms = 0;  // the reconnect interval alone (the breaker: gate_breaker_test)
  auto gate = MakeGate(o, /*generous_timeout=*/false);
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());  // connects at 1 s
  ASSERT_EQ(gate->Admit(Req()).verdict, Verdict::kAdmit);

  server_->Stop();
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);  // the connection breaks
  ASSERT_TRUE(server_->Start()) << server_->error();
  // The server is back, but the fake clock has not moved since the last
  // connect: no attempt, however long the restart took in real time.
  Decision d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kFailOpen);
  EXPECT_NE(d.reason.find("next reconnect attempt pending"), std::string::npos) << d.reason;
  clock.AdvanceMs(99);
  d = gate->Admit(Req());
  EXPECT_NE(d.reason.find("next reconnect attempt pending"), std::string::npos) << d.reason;

  clock.AdvanceMs(1);  // the interval has passed: one attempt, which connects
  d = gate->Admit(Req());
  EXPECT_EQ(d.reason.find("next reconnect attempt pending"), std::string::npos) << d.reason;
  // The restarted server lost the caps (no persistence): the admission failed
  // open on the unconfigured target, over the new connection.
  EXPECT_EQ(d.verdict, Verdict::kFailOpen);
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kAdmit);
  EXPECT_EQ(gate->fail_open_count(), 4u);
}

TEST_F(GateClock, FailOpenWarningsFollowTheInjectedClock) {
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  FakeClock clock(5'000'000);
  GateOptions o;
  o.clock = &clock;
  o.warn_interval_ms = 1000;
  auto gate = MakeGate(o);  // no caps: every call fails open
  for (int i = 0; i < 3; ++i) EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);
  clock.AdvanceMs(999);
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);
  const size_t before = Count(log.str(), "failing open");
  clock.AdvanceMs(1);
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);
  spdlog::set_default_logger(previous);
  const std::string text = log.str();
  EXPECT_EQ(before, 1u) << text;
  EXPECT_EQ(Count(text, "failing open"), 2u) << text;
  EXPECT_EQ(Count(text, "failing open (5 so far in this process)"), 1u) << text;
  EXPECT_EQ(gate->fail_open_count(), 5u);
}

}  // namespace
}  // namespace bp::test
