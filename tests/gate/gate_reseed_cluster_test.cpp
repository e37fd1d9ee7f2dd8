// On a real 3-primary cluster (tests/support/valkey_cluster.h): the primary
// that owns a target's slot is stopped and restarted empty (no persistence;
// it keeps its slots through its nodes file), and the gate re-seeds the
// target from its declared configuration and gates again by itself within
// 2 s of the node serving its slot, while a target on another primary never
// stopped gating.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "bp/valkey_cluster.h"
#include "support/valkey_cluster.h"

namespace bp::test {
namespace {

using SteadyTime = std::chrono::steady_clock;

// The first name "<stem><n>" whose slot the cluster gives to `node`.
std::string TargetOn(const ValkeyTestCluster& cluster, int node, const std::string& stem) {
  for (int n = 0; n < 1000; ++n) {
    std::string name = stem + std::to_string(n);
    if (cluster.OwnerOf(KeySlot(name)) == node) return name;
  }
  return "";
}

AdmitRequest Req() { return AdmitRequest{"a", 1, {1, 0}, 0, 0}; }

TEST(GateReseedCluster, RestartedEmptyPrimaryIsReseededAndGatesAgain) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  auto declared = std::make_shared<GateConfig>();
  declared->configured = true;
  declared->caps = GateCaps{100000, 0, 1.0};
  declared->tenant_weights = {{"a", 2}};
  std::vector<std::unique_ptr<Gate>> gates;
  for (int node : {1, 2}) {
    GateOptions o;
    o.url = cluster.url();
    o.target = TargetOn(cluster, node, "reseed-t");
    ASSERT_FALSE(o.target.empty());
    o.declared_config = declared;
    o.command_timeout_ms = 2000;  // the test box is loaded; a stopped node refuses at once
    o.connect_timeout_ms = 1000;
    gates.push_back(std::make_unique<Gate>(o));
    ASSERT_TRUE(GateAdmin(*gates.back()).ReplaceConfig(*declared).ok());
    ASSERT_EQ(gates.back()->Admit(Req()).verdict, Verdict::kAdmit);
  }
  Gate& restarted = *gates[0];
  Gate& other = *gates[1];

  cluster.StopNode(1);
  EXPECT_EQ(restarted.Admit(Req()).verdict, Verdict::kFailOpen);
  EXPECT_EQ(other.Admit(Req()).verdict, Verdict::kAdmit);  // its shard is up
  ASSERT_TRUE(cluster.StartNode(1)) << cluster.error();
  // The restarted node answers CLUSTERDOWN until it has rejoined the
  // cluster; it serves its slot from the first answer that is not an error,
  // which this connection watches for while the gate admits.
  ValkeyConnection node(ValkeyOptions{cluster.node_url(1), 1000, 2000});
  const std::string state_key = "bp:{" + restarted.options().target + "}:state";
  // The node can start serving between a probe that saw an error and the
  // gate's next call; then the time of that probe bounds the start from
  // below, so the measured resumption is never shorter than the true one.
  SteadyTime::time_point serving{};
  SteadyTime::time_point last_refused_probe{};
  Decision d;
  for (int i = 0; i < 500; ++i) {
    if (serving == SteadyTime::time_point{}) {
      const auto probed = SteadyTime::now();
      auto r = node.Command({"EXISTS", state_key});
      if (r.ok() && !r->is_error()) {
        serving = probed;
      } else {
        last_refused_probe = probed;
      }
    }
    d = restarted.Admit(Req());
    if (d.verdict != Verdict::kFailOpen) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(d.verdict, Verdict::kAdmit) << d.reason;
  if (serving == SteadyTime::time_point{}) serving = last_refused_probe;
  ASSERT_NE(serving, SteadyTime::time_point{});
  const auto resumed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyTime::now() - serving).count();
  EXPECT_LT(resumed_ms, 2000);
  RecordProperty("resumed_ms", std::to_string(resumed_ms));

  const GateCounters c = restarted.counters();
  EXPECT_EQ(c.reseeds, 1u);
  EXPECT_EQ(c.fail_opens_unconfigured, 0u);
  EXPECT_EQ(other.counters().reseeds, 0u);
  EXPECT_EQ(other.counters().fail_opens, 0u);
  auto config = GateAdmin(restarted).Config();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->caps.requests_per_s, 100000);
  EXPECT_EQ(config->tenant_weights, (std::map<std::string, double>{{"a", 2}}));
}

}  // namespace
}  // namespace bp::test
