// Re-seeding a target that lost its state (GateOptions::declared_config,
// docs/store-restart.md): the seed writes the declared configuration with
// empty buckets, once across racing clients, at most once per interval per
// client, never an invalid configuration; fail-opens are counted by cause.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GateReseed : public GateSuite {};

std::shared_ptr<const GateConfig> Declared() {
  auto c = std::make_shared<GateConfig>();
  c->configured = true;
  c->caps = GateCaps{10, 1000, 1.0};
  c->omega = {1.0, 0.5};
  c->tenant_weights = {{"a", 2.0}};
  c->tuning.slack_ms = 40;
  return c;
}

AdmitRequest Req(int64_t now_ms = 0) { return AdmitRequest{"a", 1, {1, 0}, 0, now_ms}; }

// Counts the occurrences of `what` in `text`.
size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; ++pos) ++n;
  return n;
}

TEST_F(GateReseed, SeedsTheDeclaredConfigurationWithEmptyBuckets) {
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  GateOptions o;
  o.declared_config = Declared();
  auto gate = MakeGate(o);  // an empty target: as after a restart without persistence
  GateAdmin admin(*gate);

  // Seeded at kT0 with L1 empty: the retried admission waits for one
  // request's refill, 1 / 10 per s = 100 ms, where a cold start admits.
  Decision d = gate->Admit(Req(kT0));
  EXPECT_EQ(d.verdict, Verdict::kDefer) << d.reason;
  EXPECT_EQ(d.delta_ms, 100);
  EXPECT_EQ(d.reason, "l1:requests");
  auto st = admin.State();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->l1_requests, 0);  // not the full burst of 10
  EXPECT_EQ(st->l1_tokens, 0);    // not 1000
  EXPECT_EQ(st->l1_at_ms, static_cast<double>(kT0));

  // 0 -> 1 request after 100 ms: admitted. Tickets count from the seed time
  // in microseconds (kT0 * 1000), so none repeats a ticket of the lost state.
  d = gate->Admit(Req(kT0 + 100));
  ASSERT_EQ(d.verdict, Verdict::kAdmit) << d.reason;
  EXPECT_EQ(d.ticket, std::to_string(kT0 * 1000 + 1));
  EXPECT_TRUE(gate->Release(d.ticket, Cost{1, 0}, kT0 + 100).ok());

  auto config = admin.Config();
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->caps.requests_per_s, 10);
  EXPECT_EQ(config->caps.tokens_per_s, 1000);
  EXPECT_EQ(config->omega, (std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(config->tenant_weights, (std::map<std::string, double>{{"a", 2.0}}));
  EXPECT_EQ(config->tuning.slack_ms, 40);

  // A configured target is never seeded again: a hot change stays.
  ASSERT_TRUE(admin.SetTenantWeight("a", 3).ok());
  EXPECT_EQ(gate->Admit(Req(kT0 + 200)).verdict, Verdict::kAdmit);
  EXPECT_EQ(admin.Config()->tenant_weights.at("a"), 3);

  const GateCounters c = gate->counters();
  EXPECT_EQ(c.reseeds, 1u);
  EXPECT_EQ(c.fail_opens, 0u);
  spdlog::set_default_logger(previous);
  EXPECT_EQ(Count(log.str(), "re-seeded it from the declared configuration"), 1u) << log.str();
}

TEST_F(GateReseed, RacingClientsSeedOnce) {
  GateOptions o;
  o.declared_config = Declared();
  o.reseed_interval_ms = 0;
  auto first = MakeGate(o);
  o.target = first->options().target;
  o.url = first->options().url;
  o.command_timeout_ms = 2000;
  constexpr int kClients = 6, kCalls = 20;
  std::vector<std::unique_ptr<Gate>> gates;
  for (int i = 0; i < kClients; ++i) gates.push_back(std::make_unique<Gate>(o));
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(GateAdmin(*first).Reset().ok());  // every key gone, as after a restart
    std::atomic<int> ready{0}, fail_opens{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kClients; ++i) {
      threads.emplace_back([&, i] {
        ++ready;
        while (ready.load() < kClients) std::this_thread::yield();
        for (int n = 0; n < kCalls; ++n) {
          fail_opens += gates[i]->Admit(Req()).verdict == Verdict::kFailOpen;
        }
      });
    }
    for (auto& t : threads) t.join();
    uint64_t reseeds = 0;
    for (const auto& g : gates) reseeds += g->counters().reseeds;
    EXPECT_EQ(reseeds, static_cast<uint64_t>(round + 1));  // one per loss, whoever wins
    EXPECT_EQ(fail_opens.load(), 0);
  }
}

TEST_F(GateReseed, AttemptsAreLimitedPerInterval) {
  FakeClock clock(1'000'000);
  GateOptions o;
  o.declared_config = Declared();
  o.reseed_interval_ms = 1000;
  o.clock = &clock;
  auto gate = MakeGate(o);
  GateAdmin admin(*gate);
  EXPECT_NE(gate->Admit(Req(kT0)).verdict, Verdict::kFailOpen);
  ASSERT_TRUE(admin.Reset().ok());
  clock.AdvanceMs(999);  // within the interval: no second attempt
  Decision d = gate->Admit(Req(kT0 + 999));
  EXPECT_EQ(d.verdict, Verdict::kFailOpen);
  EXPECT_EQ(d.cause, FailOpenCause::kNotConfigured);
  EXPECT_NE(d.reason.find("the last re-seed attempt was within 1000 ms"), std::string::npos)
      << d.reason;
  clock.AdvanceMs(1);
  EXPECT_NE(gate->Admit(Req(kT0 + 1000)).verdict, Verdict::kFailOpen);
  const GateCounters c = gate->counters();
  EXPECT_EQ(c.reseeds, 2u);
  EXPECT_EQ(c.fail_opens_unconfigured, 1u);
}

TEST_F(GateReseed, AnInvalidDeclaredConfigurationIsNeverWritten) {
  auto bad = std::make_shared<GateConfig>(*Declared());
  bad->caps.burst_s = -1;
  GateOptions o;
  o.declared_config = bad;
  auto gate = MakeGate(o);
  Decision d = gate->Admit(Req());
  EXPECT_EQ(d.verdict, Verdict::kFailOpen);
  EXPECT_EQ(d.cause, FailOpenCause::kNotConfigured);
  EXPECT_EQ(d.reason,
            "target not configured; the declared configuration is invalid (caps: burst_s must "
            "be a positive finite number, got -1), not seeded");
  EXPECT_FALSE(GateAdmin(*gate).Config()->configured);
  EXPECT_EQ(gate->counters().reseeds, 0u);
}

TEST_F(GateReseed, FailOpensAreCountedByCause) {
  auto gate = MakeGate();  // no declared configuration, no caps
  Decision d = gate->Admit(Req());
  EXPECT_EQ(d.cause, FailOpenCause::kNotConfigured);
  EXPECT_EQ(d.reason, "target not configured and no declared configuration to re-seed it");
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{1000, 0, 1.0}).ok());
  EXPECT_EQ(gate->Admit(Req()).cause, FailOpenCause::kNone);

  // A paused server: the call times out, and the breaker it opened answers
  // the next call as timed out too. Scripts are paused (WRITE pauses every
  // EVALSHA) until this test's UNPAUSE, not for a fixed time a loaded box
  // could use up before the gate's call; admin's own commands still run.
  GateOptions slow = gate->options();
  slow.command_timeout_ms = 50;
  Gate paused(slow);
  ASSERT_TRUE(paused.Ping().ok());
  ValkeyConnection admin(ValkeyOptions{server_->url(), 1000, 1000});
  auto pause = admin.Command({"CLIENT", "PAUSE", "30000", "WRITE"});
  ASSERT_TRUE(pause.ok() && !pause->is_error());
  EXPECT_EQ(paused.Admit(Req()).cause, FailOpenCause::kTimedOut);
  d = paused.Admit(Req());
  EXPECT_EQ(d.cause, FailOpenCause::kTimedOut);
  EXPECT_NE(d.reason.find("circuit breaker open: a gate call to valkey timed out"),
            std::string::npos)
      << d.reason;
  auto unpause = admin.Command({"CLIENT", "UNPAUSE"});
  ASSERT_TRUE(unpause.ok() && !unpause->is_error());

  // Nothing listening: unreachable.
  GateOptions nowhere = gate->options();
  nowhere.url = "redis://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  Gate down(nowhere);
  EXPECT_EQ(down.Admit(Req()).cause, FailOpenCause::kUnreachable);
  d = down.Admit(Req());
  EXPECT_EQ(d.cause, FailOpenCause::kUnreachable);
  EXPECT_NE(d.reason.find("found it unreachable"), std::string::npos) << d.reason;

  const GateCounters c = gate->counters(), p = paused.counters(), n = down.counters();
  EXPECT_EQ(c.fail_opens, 1u);
  EXPECT_EQ(c.fail_opens_unconfigured, 1u);
  EXPECT_EQ(p.fail_opens_timed_out, 2u);
  EXPECT_EQ(p.fail_opens, 2u);
  EXPECT_EQ(n.fail_opens_unreachable, 2u);
  EXPECT_EQ(n.fail_opens, 2u);
  EXPECT_STREQ(FailOpenCauseName(FailOpenCause::kNotConfigured), "target not configured");
}

}  // namespace
}  // namespace bp::test
