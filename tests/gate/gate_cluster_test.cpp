// The gate on a real 3-primary cluster (tests/support/valkey_cluster.h):
// targets routed to the primary owning their {target} slot, P1 per target
// with an explicit clock, a live slot migration (ASK then MOVED, NOSCRIPT on
// the new owner) with decisions identical to an unmigrated twin, and a down
// or paused primary failing open only its own targets (I3 per shard), each
// after one failed call that opens only those targets' circuit breakers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "bp/valkey_cluster.h"
#include "support/valkey_cluster.h"

namespace bp::test {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

// The first name "<stem><n>" whose slot the cluster gives to `node`.
std::string TargetOn(const ValkeyTestCluster& cluster, int node, const std::string& stem) {
  for (int n = 0; n < 1000; ++n) {
    std::string name = stem + std::to_string(n);
    if (cluster.OwnerOf(KeySlot(name)) == node) return name;
  }
  return "";
}

GateOptions ClusterGate(const ValkeyTestCluster& cluster, const std::string& target,
                        const Clock* clock = nullptr) {
  GateOptions o;
  o.url = cluster.url();
  o.target = target;
  o.clock = clock;              // the reconnect interval and the breaker's cool-off
  o.command_timeout_ms = 2000;  // the test box is loaded; outages refuse at once
  o.connect_timeout_ms = 1000;
  return o;
}

bool KeyOn(const ValkeyTestCluster& cluster, int node, const std::string& key) {
  ValkeyConnection c(ValkeyOptions{cluster.node_url(node), 1000, 2000});
  auto r = c.Command({"EXISTS", key});
  return r.ok() && r->integer == 1;
}

// n admissions of one tenant at script time now_ms; the number admitted.
int AdmitsAt(Gate& gate, int n, int64_t now_ms, int* fail_opens = nullptr) {
  int admitted = 0;
  for (int i = 0; i < n; ++i) {
    Decision d = gate.Admit(AdmitRequest{"a", 1, {1, 0}, 0, now_ms});
    admitted += d.verdict == Verdict::kAdmit;
    if (fail_opens) *fail_opens += d.verdict == Verdict::kFailOpen;
  }
  return admitted;
}

TEST(GateCluster, TargetsOnEveryShardHoldP1) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  for (int node = 0; node < ValkeyTestCluster::kNodes; ++node) {
    const std::string target = TargetOn(cluster, node, "shard-t");
    ASSERT_FALSE(target.empty());
    Gate gate(ClusterGate(cluster, target));
    const double cap = 10.0 * (node + 1);  // distinct caps per shard
    ASSERT_TRUE(GateAdmin(gate).SetCaps(GateCaps{cap, 0, 1.0}).ok());
    // The target's keys live on the primary owning its slot, and only there.
    for (int other = 0; other < ValkeyTestCluster::kNodes; ++other) {
      EXPECT_EQ(KeyOn(cluster, other, "bp:{" + target + "}:state"), other == node) << target;
    }
    // P1: a full bucket of C * burst at kT0, then C * 0.5 s of refill.
    int fail_opens = 0;
    EXPECT_EQ(AdmitsAt(gate, static_cast<int>(cap) + 5, kT0, &fail_opens), cap) << target;
    EXPECT_EQ(AdmitsAt(gate, static_cast<int>(cap), kT0 + 500, &fail_opens), cap / 2) << target;
    EXPECT_EQ(fail_opens, 0);
    EXPECT_EQ(gate.counters().fail_opens, 0u);
  }
}

TEST(GateCluster, AskThenMovedLoadsTheScriptOnTheNewOwner) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string target = TargetOn(cluster, 0, "ask-t");
  const std::string prefix = "bp:{" + target + "}";
  const int slot = KeySlot(target);
  // A script that, like the gate's, declares only the (never existing) prefix.
  const std::string body = "return redis.call('INCR', KEYS[1] .. ':n')";
  ValkeyConnection conn(ValkeyOptions{cluster.url(), 1000, 2000}, prefix);
  ASSERT_NE(conn.cluster(), nullptr);
  auto r = conn.EvalScript(body, {prefix}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->integer, 1);
  const std::string source = conn.cluster()->OwnerOf(slot);
  EXPECT_EQ(source, "127.0.0.1:" + std::to_string(cluster.port(0)));

  ASSERT_EQ(cluster.BeginMigration(slot, 2), "");
  // The source answers ASK; the new owner has never seen the script
  // (NOSCRIPT), so it is loaded there, and the call runs there once.
  r = conn.EvalScript(body, {prefix}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->AsString(), "2");
  EXPECT_EQ(conn.cluster()->ask_count(), 1u);
  EXPECT_EQ(conn.cluster()->moved_count(), 0u);
  EXPECT_EQ(conn.cluster()->OwnerOf(slot), source);  // ASK leaves the map alone
  // ASKING + EVALSHA (NOSCRIPT), SCRIPT LOAD, ASKING + EVALSHA again.
  EXPECT_EQ(cluster.CommandCalls(2, "asking"), 2);
  EXPECT_EQ(cluster.CommandCalls(2, "script|load"), 1);

  ASSERT_EQ(cluster.FinishMigration(slot, 2), "");
  r = conn.EvalScript(body, {prefix}, {});  // MOVED: the map is reloaded
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->AsString(), "3");
  EXPECT_EQ(conn.cluster()->moved_count(), 1u);
  EXPECT_EQ(conn.cluster()->OwnerOf(slot), "127.0.0.1:" + std::to_string(cluster.port(2)));
  r = conn.EvalScript(body, {prefix}, {});  // straight to the new owner
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->AsString(), "4");
  EXPECT_EQ(conn.cluster()->moved_count(), 1u);
  EXPECT_FALSE(KeyOn(cluster, 0, prefix + ":n"));
  EXPECT_TRUE(KeyOn(cluster, 2, prefix + ":n"));
}

// One call of a deterministic admission sequence: two tenants alternating,
// the script clock 5 ms further each call, demand (200/s) above the cap.
AdmitRequest SequenceCall(int i) {
  return AdmitRequest{i % 2 == 0 ? "a" : "b", 1, {1, 0}, 0, kT0 + 5 * int64_t{i}};
}

TEST(GateCluster, SlotMigrationMidRunChangesNoDecision) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string target = TargetOn(cluster, 1, "mig-t");
  const std::string twin = TargetOn(cluster, 0, "twin-t");
  const int slot = KeySlot(target);
  const GateCaps caps{40, 0, 1.0};
  Gate gate(ClusterGate(cluster, target));
  ASSERT_TRUE(GateAdmin(gate).SetCaps(caps).ok());

  // Admissions (and releases of what was admitted) run in a loop while the
  // target's slot moves from node 1 to node 2, with a 300 ms ASK window.
  std::vector<Verdict> verdicts;
  std::atomic<int> calls{0};
  std::atomic<bool> migrated{false};
  int release_failures = 0;
  std::thread loop([&] {
    int after = 0;
    for (int i = 0; after < 400 && i < 20000; ++i) {
      const AdmitRequest req = SequenceCall(i);
      Decision d = gate.Admit(req);
      verdicts.push_back(d.verdict);
      if (d.verdict == Verdict::kAdmit && !gate.Release(d.ticket, req.cost, req.now_ms).ok()) {
        release_failures++;
      }
      calls++;
      if (migrated.load()) after++;
    }
  });
  while (calls.load() < 300) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int calls_before = calls.load();
  const std::string moved = cluster.MigrateSlot(slot, 2, 300);
  migrated = true;
  loop.join();
  ASSERT_EQ(moved, "");
  std::printf("  %zu calls, %d before the migration began\n", verdicts.size(), calls_before);

  EXPECT_EQ(gate.counters().fail_opens, 0u);  // no error surfaced to callers
  EXPECT_EQ(gate.counters().release_errors, 0u);
  EXPECT_EQ(release_failures, 0);
  EXPECT_EQ(cluster.OwnerOf(slot), 2);
  EXPECT_TRUE(KeyOn(cluster, 2, "bp:{" + target + "}:state"));
  EXPECT_FALSE(KeyOn(cluster, 1, "bp:{" + target + "}:state"));
  EXPECT_GT(cluster.CommandCalls(2, "asking"), 0);  // calls ran during the ASK window

  // The same sequence on a twin target that never moves: identical verdicts,
  // so nothing was lost or debited twice across the move.
  Gate reference(ClusterGate(cluster, twin));
  ASSERT_TRUE(GateAdmin(reference).SetCaps(caps).ok());
  int64_t admitted = 0, reference_admitted = 0, mismatches = 0;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const AdmitRequest req = SequenceCall(static_cast<int>(i));
    Decision d = reference.Admit(req);
    if (d.verdict == Verdict::kAdmit) {
      ASSERT_TRUE(reference.Release(d.ticket, req.cost, req.now_ms).ok());
    }
    mismatches += d.verdict != verdicts[i];
    admitted += verdicts[i] == Verdict::kAdmit;
    reference_admitted += d.verdict == Verdict::kAdmit;
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(admitted, reference_admitted);
  // P1 over the whole run: at most burst + C * elapsed script time.
  const double elapsed_s = 5.0 * static_cast<double>(verdicts.size() - 1) / 1000;
  EXPECT_LE(admitted, caps.requests_per_s * (caps.burst_s + elapsed_s));
  EXPECT_GE(admitted, caps.requests_per_s * caps.burst_s);
}

TEST(GateCluster, StoppedPrimaryFailsOpenItsTargetsOnly) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  FakeClock clock(1'000'000);  // the breakers' cool-off ends only when told
  std::vector<std::unique_ptr<Gate>> gates;
  for (int node = 0; node < ValkeyTestCluster::kNodes; ++node) {
    const std::string target = TargetOn(cluster, node, "down-t");
    ASSERT_FALSE(target.empty());
    gates.push_back(std::make_unique<Gate>(ClusterGate(cluster, target, &clock)));
    ASSERT_TRUE(GateAdmin(*gates.back()).SetCaps(GateCaps{10, 0, 1.0}).ok());
  }
  cluster.StopNode(1);
  for (int node = 0; node < ValkeyTestCluster::kNodes; ++node) {
    Gate& gate = *gates[node];
    int fail_opens = 0;
    const int admitted = AdmitsAt(gate, 15, kT0, &fail_opens);
    const GateCounters c = gate.counters();
    if (node == 1) {
      EXPECT_EQ(fail_opens, 15);  // I3: its shard is down, every call goes through
      EXPECT_EQ(admitted, 0);
      // One call found the connection gone and opened this target's
      // breaker; the other 14 failed open without a call.
      EXPECT_EQ(c.connection_errors + c.timeouts, 1u);
      EXPECT_EQ(c.breaker_opens, 1u);
      EXPECT_EQ(c.breaker_skips, 14u);
      EXPECT_EQ(gate.breaker_state(), BreakerState::kOpen);
    } else {
      EXPECT_EQ(fail_opens, 0) << node;  // the other shards keep gating, exactly
      EXPECT_EQ(admitted, 10) << node;
      EXPECT_EQ(c.breaker_opens, 0u) << node;
      EXPECT_EQ(gate.breaker_state(), BreakerState::kClosed) << node;
    }
  }
  // Back up (empty: no persistence): configured again, it gates again.
  ASSERT_TRUE(cluster.StartNode(1)) << cluster.error();
  Status s = Status::Unavailable("not tried");
  for (int i = 0; i < 100 && !s.ok(); ++i) {
    s = GateAdmin(*gates[1]).SetCaps(GateCaps{10, 0, 1.0});
    if (!s.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(gates[1]->breaker_state(), BreakerState::kClosed);  // the tool call answered
  EXPECT_EQ(AdmitsAt(*gates[1], 15, kT0), 10);
}

TEST(GateCluster, PausedPrimaryOpensOnlyItsTargetsBreaker) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  FakeClock clock(1'000'000);
  std::vector<std::unique_ptr<Gate>> gates;
  for (int node = 0; node < ValkeyTestCluster::kNodes; ++node) {
    const std::string target = TargetOn(cluster, node, "pause-t");
    ASSERT_FALSE(target.empty());
    GateOptions o = ClusterGate(cluster, target, &clock);
    o.command_timeout_ms = 500;  // each wait on the paused node costs this much
    gates.push_back(std::make_unique<Gate>(o));
    ASSERT_TRUE(GateAdmin(*gates.back()).SetCaps(GateCaps{10, 0, 1.0}).ok());
  }
  // CLIENT PAUSE WRITE holds EVALSHA on node 1 (at most 30 s) until UNPAUSE.
  ValkeyConnection admin(ValkeyOptions{cluster.node_url(1), 1000, 2000});
  auto r = admin.Command({"CLIENT", "PAUSE", "30000", "WRITE"});
  ASSERT_TRUE(r.ok() && !r->is_error());
  for (int node = 0; node < ValkeyTestCluster::kNodes; ++node) {
    int fail_opens = 0;
    const int admitted = AdmitsAt(*gates[node], 15, kT0, &fail_opens);
    const GateCounters c = gates[node]->counters();
    if (node == 1) {
      EXPECT_EQ(fail_opens, 15);
      EXPECT_EQ(c.timeouts, 1u);  // one wait, not 15
      EXPECT_EQ(c.breaker_opens, 1u);
      EXPECT_EQ(c.breaker_skips, 14u);
    } else {
      EXPECT_EQ(admitted, 10) << node;
      EXPECT_EQ(c.timeouts + c.breaker_opens + c.fail_opens, 0u) << node;
    }
  }
  r = admin.Command({"CLIENT", "UNPAUSE"});
  ASSERT_TRUE(r.ok() && !r->is_error());
  clock.AdvanceMs(GateOptions{}.breaker_cool_off_ms);  // the probe is due
  // A full bucket 1 s later (whether or not the timed-out call ran): the
  // probe and 9 more are admitted.
  EXPECT_EQ(AdmitsAt(*gates[1], 15, kT0 + 1000), 10);
  EXPECT_EQ(gates[1]->breaker_state(), BreakerState::kClosed);
  EXPECT_EQ(gates[1]->counters().timeouts, 1u);
}

}  // namespace
}  // namespace bp::test
