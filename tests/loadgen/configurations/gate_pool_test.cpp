// loadgen's gate threads (gate_pool.h) against a real server: the releases
// still queued when the pool stops are drained, so their tickets leave
// Valkey; past the drain deadline (a FakeClock moved by a job) the rest are
// skipped, counted, and their tickets stay; a paused server costs the drain
// one timeout (the gate's breaker fails the rest at once). One thread, so job order is
// exact; a first job holds the thread until every release is queued and
// then begins the stop, so each release runs in the drain.
#include "bp/loadgen/gate_pool.h"

#include <gtest/gtest.h>

#include <future>
#include <string>
#include <string_view>
#include <vector>

#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "support/valkey_server.h"

namespace bp::lua {
extern const std::string_view kStateLua;  // lib/gate's embedded prelude.lua + state.lua
}  // namespace bp::lua

namespace bp::loadgen {
namespace {

class GatePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.running()) << server_.error();
    options_.url = server_.url();
    options_.target = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    options_.mode = GateMode::kReconcile;
    options_.command_timeout_ms = 2000;  // the test box is loaded
    GateAdmin admin(options_);
    ASSERT_TRUE(admin.Reset().ok());
    ASSERT_TRUE(admin.SetCaps(GateCaps{1000, 0, 1.0}).ok());
    Gate gate(options_);
    for (int i = 0; i < 10; ++i) {
      Decision d = gate.Admit(AdmitRequest{"a", 1, {1, 10}, 0, 0});
      ASSERT_EQ(d.verdict, Verdict::kAdmit) << d.reason;
      tickets_.push_back(d.ticket);
    }
    ASSERT_EQ(TicketsInServer(), 10);
  }

  // Ticket keys of the target in the server (KEYS: a test-sized db).
  int64_t TicketsInServer() {
    ValkeyConnection c(ValkeyOptions{server_.url(), 1000, 2000});
    // The ticket key prefix from state.lua's "keys" (prelude.lua owns the names).
    auto names = c.EvalScript(lua::kStateLua, {"bp:{" + options_.target + "}:state"}, {"keys"},
                              ValkeyConnection::ScriptText::kStatic);
    std::string prefix;
    for (size_t i = 0; names.ok() && i + 1 < names->elements.size(); i += 2) {
      if (names->elements[i].AsString() == "ticket_prefix")
        prefix = names->elements[i + 1].AsString();
    }
    EXPECT_FALSE(prefix.empty());
    auto r = c.Command({"KEYS", prefix + "*"});
    EXPECT_TRUE(r.ok() && r->type == ValkeyReply::Type::kArray);
    return r.ok() ? static_cast<int64_t>(r->elements.size()) : -1;
  }

  AdmissionFactory Factory() {
    return [o = options_]() -> std::unique_ptr<Admission> { return std::make_unique<Gate>(o); };
  }

  // Queues a first job that, once running, waits for Go() and then begins
  // the stop: the jobs queued behind it all meet the stop. Go() returns once
  // that job runs (so a Stop after it cannot drop it).
  void HoldThenBeginStop(GatePool& pool, int drain_ms) {
    pool.Submit([this, &pool, drain_ms](Admission&) {
      started_.set_value();
      go_.get_future().wait();
      pool.BeginStop(drain_ms);
    });
  }
  void Go() {
    started_.get_future().wait();
    go_.set_value();
  }

  static GatePool::ReleaseJob ReleaseOf(const std::string& ticket) {
    return [ticket](Admission& gate) {
      return gate.Release(ticket, Cost{1, 25}, UpstreamReport{});
    };
  }

  test::ValkeyServer server_;
  GateOptions options_;
  std::vector<std::string> tickets_;
  std::promise<void> started_, go_;
};

TEST_F(GatePoolTest, StopDrainsQueuedReleases) {
  GatePool pool(1, Factory());
  HoldThenBeginStop(pool, 60'000);
  for (const std::string& t : tickets_) pool.SubmitRelease(ReleaseOf(t));
  pool.Submit([](Admission& gate) { gate.Admit(AdmitRequest{"a", 1, {1, 10}, 0, 0}); });
  Go();
  const GatePool::StopReport report = pool.Stop(60'000);
  EXPECT_EQ(report.released, 10u);
  EXPECT_EQ(report.failed, 0u);
  EXPECT_EQ(report.skipped, 0u);
  EXPECT_EQ(report.dropped_admits, 1u);  // the Admit queued last never ran
  EXPECT_EQ(report.unreleased(), 0u);
  EXPECT_EQ(TicketsInServer(), 0);  // 10 -> 0 tickets
  EXPECT_EQ(pool.counters().releases, 10u);
  EXPECT_EQ(pool.counters().admits, 0u);
  // Stopped: a second Stop reports nothing, a late release is ignored.
  pool.SubmitRelease(ReleaseOf(tickets_[0]));
  EXPECT_EQ(pool.Stop(60'000).released, 0u);
}

TEST_F(GatePoolTest, ReleasesPastTheDeadlineAreSkippedAndCounted) {
  FakeClock clock(1'000'000);
  GatePool pool(1, Factory(), &clock);
  HoldThenBeginStop(pool, 1000);  // deadline 2 s on the clock
  for (size_t i = 0; i < tickets_.size(); ++i) {
    pool.SubmitRelease(ReleaseOf(tickets_[i]));
    // The 4th release ends exactly at the deadline: releases 5..10 are late.
    if (i == 3) {
      pool.SubmitRelease([&clock](Admission&) {
        clock.AdvanceMs(1000);
        return Status::Unavailable("a release that failed");
      });
    }
  }
  Go();
  const GatePool::StopReport report = pool.Stop(1000);
  EXPECT_EQ(report.released, 4u);
  EXPECT_EQ(report.failed, 1u);
  EXPECT_EQ(report.skipped, 6u);
  EXPECT_EQ(report.unreleased(), 7u);
  EXPECT_EQ(TicketsInServer(), 6);  // 10 -> 6 tickets: the skipped ones stay
}

TEST_F(GatePoolTest, PausedServerEndsTheDrainAfterOneTimeout) {
  options_.command_timeout_ms = 300;
  GatePool pool(1, Factory());
  HoldThenBeginStop(pool, 60'000);
  for (const std::string& t : tickets_) pool.SubmitRelease(ReleaseOf(t));
  // CLIENT PAUSE WRITE holds EVALSHA (at most 30 s) until UNPAUSE.
  ValkeyConnection admin(ValkeyOptions{server_.url(), 1000, 2000});
  auto r = admin.Command({"CLIENT", "PAUSE", "30000", "WRITE"});
  ASSERT_TRUE(r.ok() && !r->is_error());
  Go();
  const GatePool::StopReport report = pool.Stop(60'000);
  admin.Command({"CLIENT", "UNPAUSE"});
  // The first release times out and opens the gate's breaker; the other 9
  // fail at once instead of waiting 300 ms each.
  EXPECT_EQ(report.failed, 10u);
  EXPECT_EQ(report.released + report.skipped, 0u);
  const GateCounters c = pool.counters();
  EXPECT_EQ(c.timeouts, 1u);
  EXPECT_EQ(c.breaker_skips, 9u);
  EXPECT_EQ(c.release_errors, 10u);
  EXPECT_EQ(TicketsInServer(), 10);  // nothing released: the tickets expire
}

}  // namespace
}  // namespace bp::loadgen
