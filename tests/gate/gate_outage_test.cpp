// I3 (degraded open) and the script cache: the server is stopped, paused and
// flushed under a gate with its production command timeout (20 ms). The only
// timed asserts are generous upper bounds on how long a fail-open takes.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GateOutage : public GateSuite {};

using Clock = std::chrono::steady_clock;

int64_t ElapsedMs(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

AdmitRequest Req() { return AdmitRequest{"a", 1, {1, 0}, 0, 0}; }

TEST_F(GateOutage, FailsOpenWhileStoppedAndAdmitsAgainAfterRestart) {
  GateOptions o;
  o.reconnect_interval_ms = 50;
  auto gate = MakeGate(o, /*generous_timeout=*/false);
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());
  ASSERT_EQ(gate->Admit(Req()).verdict, Verdict::kAdmit);

  server_->Stop();
  auto start = Clock::now();
  Decision d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kFailOpen);
  EXPECT_LT(ElapsedMs(start), 1000);  // refused at once; bound is generous
  EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);
  EXPECT_EQ(gate->fail_open_count(), 2u);

  ASSERT_TRUE(server_->Start()) << server_->error();
  // A restarted server without persistence has lost caps and scripts: the
  // operator re-applies the configuration (bpctl); the script reloads itself.
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());
  d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kAdmit) << d.reason;  // EVALSHA -> NOSCRIPT -> load
  EXPECT_EQ(gate->fail_open_count(), 2u);
}

TEST_F(GateOutage, NoScriptAfterFlushIsReloaded) {
  auto gate = MakeGate();
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());
  ASSERT_EQ(gate->Admit(Req()).verdict, Verdict::kAdmit);
  ValkeyConnection admin(ValkeyOptions{server_->url(), 1000, 1000});
  auto r = admin.Command({"SCRIPT", "FLUSH"});
  ASSERT_TRUE(r.ok() && !r->is_error());
  Decision d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kAdmit) << d.reason;
  EXPECT_EQ(gate->fail_open_count(), 0u);
}

TEST_F(GateOutage, SlowServerFailsOpenWithinTheTimeout) {
  GateOptions o;
  o.reconnect_interval_ms = 50;
  auto gate = MakeGate(o, /*generous_timeout=*/false);
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());
  ASSERT_EQ(gate->Admit(Req()).verdict, Verdict::kAdmit);
  ValkeyConnection admin(ValkeyOptions{server_->url(), 1000, 1000});
  auto r = admin.Command({"CLIENT", "PAUSE", "2000", "ALL"});
  ASSERT_TRUE(r.ok() && !r->is_error());
  auto start = Clock::now();
  Decision d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kFailOpen);
  EXPECT_LT(ElapsedMs(start), 1000);  // 20 ms timeout; the pause lasts 2 s
  std::this_thread::sleep_for(std::chrono::milliseconds(2300));
  d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kAdmit) << d.reason;
}

TEST_F(GateOutage, WarnsAtMostOncePerInterval) {
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  GateOptions o;
  o.warn_interval_ms = 3'600'000;
  auto gate = MakeGate(o);  // no caps: every call fails open
  for (int i = 0; i < 5; ++i) EXPECT_EQ(gate->Admit(Req()).verdict, Verdict::kFailOpen);
  spdlog::set_default_logger(previous);
  const std::string text = log.str();
  size_t warnings = 0;
  for (size_t pos = 0; (pos = text.find("failing open", pos)) != std::string::npos; ++pos) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u);
  EXPECT_EQ(gate->fail_open_count(), 5u);
}

TEST_F(GateOutage, PasswordFromTheUrlAuthenticates) {
  ValkeyConnection admin(ValkeyOptions{server_->url(), 1000, 1000});
  ASSERT_TRUE(admin.Command({"CONFIG", "SET", "requirepass", "pw1"}).ok());
  GateOptions o;
  o.url = "redis://:pw1@127.0.0.1:" + std::to_string(server_->port()) + "/1";
  o.target = "auth";
  o.command_timeout_ms = 2000;
  Gate gate(o);
  EXPECT_TRUE(gate.Ping().ok());
  EXPECT_TRUE(GateAdmin(gate).SetCaps(GateCaps{10, 0, 1}).ok());
  EXPECT_EQ(gate.Admit(Req()).verdict, Verdict::kAdmit);
  o.url = "redis://:wrong@127.0.0.1:" + std::to_string(server_->port());
  Gate bad(o);
  Status s = bad.Ping();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("AUTH"), std::string::npos) << s.ToString();
  ASSERT_TRUE(admin.Command({"AUTH", "pw1"}).ok());
  ASSERT_TRUE(admin.Command({"CONFIG", "SET", "requirepass", ""}).ok());
}

}  // namespace
}  // namespace bp::test
