// bpctl against a real 3-primary cluster: a redis+cluster:// URL configures
// and admits on the primary owning the target's slot; a bad cluster URL is a
// clear usage error.
#include <gtest/gtest.h>

#include <sstream>

#include "bp/bpctl/bpctl.h"
#include "bp/valkey.h"
#include "bp/valkey_cluster.h"
#include "support/valkey_cluster.h"

namespace bp::test {
namespace {

struct CtlRun {
  int rc = -1;
  std::string out, err;
};

CtlRun Bpctl(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CtlRun r;
  r.rc = bpctl::RunBpctl(args, out, err, {});
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(BpctlCluster, ConfiguresAndAdmitsOnTheOwningPrimary) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  std::string target;
  for (int n = 0; n < 1000 && target.empty(); ++n) {
    const std::string name = "ctl-t" + std::to_string(n);
    if (cluster.OwnerOf(KeySlot(name)) == 2) target = name;
  }
  ASSERT_FALSE(target.empty());
  const std::vector<std::string> global = {"--valkey", cluster.url(), "--target", target,
                                           "--create"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), global.begin(), global.end());
    return Bpctl(args);
  };
  CtlRun r = with({"set", "cap", "--rpm", "120"});  // 2 requests/s, capacity 2
  ASSERT_EQ(r.rc, bpctl::kExitOk) << r.err;
  for (const char* want : {"ADMIT ticket 1", "ADMIT ticket 2", "DEFER"}) {
    r = with({"admit", "--tenant", "a", "--requests", "1", "--now-ms", "1700000000000"});
    EXPECT_EQ(r.out.rfind(want, 0), 0u) << r.out << r.err;
  }
  for (int node = 0; node < ValkeyTestCluster::kNodes; ++node) {
    ValkeyConnection c(ValkeyOptions{cluster.node_url(node), 1000, 2000});
    auto e = c.Command({"EXISTS", "bp:{" + target + "}:state"});
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->integer, node == 2 ? 1 : 0) << node;
  }
  // The dry run's MULTI/EXEC copy and script, state reads (SCAN of the
  // target's queues) and reset go to that primary too.
  r = with({"admit", "--dry-run", "--tenant", "a", "--requests", "1", "--now-ms", "1700000001000"});
  EXPECT_EQ(r.out.rfind("ADMIT", 0), 0u) << r.out << r.err;
  r = with({"status", "--json"});
  ASSERT_EQ(r.rc, bpctl::kExitOk) << r.err;
  EXPECT_NE(r.out.find("\"tenant\": \"a\""), std::string::npos) << r.out;
  r = with({"reset", "--all"});
  ASSERT_EQ(r.rc, bpctl::kExitOk) << r.err;
  ValkeyConnection owner(ValkeyOptions{cluster.node_url(2), 1000, 2000});
  auto keys = owner.Command({"KEYS", "bp:{" + target + "}:*"});
  ASSERT_TRUE(keys.ok());
  EXPECT_TRUE(keys->elements.empty());
}

// targets, gc and the new-target check scan every primary (SCAN sees one
// node's keys): with one target on each, all three are found.
TEST(BpctlCluster, TargetsAndGcScanEveryPrimary) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  std::vector<std::string> targets(ValkeyTestCluster::kNodes);
  for (int n = 0; n < 1000; ++n) {
    const std::string name = "gc-t" + std::to_string(n);
    std::string& slot_target = targets[cluster.OwnerOf(KeySlot(name))];
    if (slot_target.empty()) slot_target = name;
  }
  for (const std::string& t : targets) {
    ASSERT_FALSE(t.empty());
    const std::vector<std::string> global = {"--valkey", cluster.url(), "--target", t, "--create"};
    std::vector<std::string> args = global;
    for (const char* a : {"set", "cap", "--rpm", "60"}) args.push_back(a);
    ASSERT_EQ(Bpctl(args).rc, bpctl::kExitOk);
    args = global;  // admitted at a script time long ago: idle
    for (const char* a : {"admit", "--tenant", "a", "--now-ms", "1000"}) args.push_back(a);
    ASSERT_EQ(Bpctl(args).rc, bpctl::kExitOk);
  }
  CtlRun r = Bpctl({"--valkey", cluster.url(), "targets"});
  ASSERT_EQ(r.rc, bpctl::kExitOk) << r.err;
  for (const std::string& t : targets) {
    EXPECT_NE(r.out.find("\n" + t + " "), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("3 target(s)\n"), std::string::npos) << r.out;
  // A name one edit away from the target on the last primary, written from
  // the first: refused, with the hint found on the other node.
  r = Bpctl({"--valkey", cluster.url(), "--target", targets[2] + "x", "set", "weight", "a", "2"});
  EXPECT_EQ(r.rc, bpctl::kExitBadValue);
  EXPECT_NE(r.err.find("closest existing: " + targets[2]), std::string::npos) << r.err;
  r = Bpctl({"--valkey", cluster.url(), "gc", "--idle-s", "3600", "--dry-run"});
  ASSERT_EQ(r.rc, bpctl::kExitOk) << r.err;
  for (const std::string& t : targets) {
    EXPECT_NE(r.out.find("would delete target " + t + " "), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("3 target(s) idle >= 3600 s to delete, 0 kept"), std::string::npos) << r.out;
  r = Bpctl({"--valkey", cluster.url(), "gc", "--idle-s", "3600"});
  ASSERT_EQ(r.rc, bpctl::kExitOk) << r.err;
  for (int node = 0; node < ValkeyTestCluster::kNodes; ++node) {
    ValkeyConnection c(ValkeyOptions{cluster.node_url(node), 1000, 2000});
    auto keys = c.Command({"KEYS", "bp:*"});
    ASSERT_TRUE(keys.ok());
    EXPECT_TRUE(keys->elements.empty()) << node;
  }
}

TEST(BpctlCluster, BadClusterUrlIsAUsageError) {
  CtlRun r = Bpctl({"--valkey", "redis+cluster://127.0.0.1:7000/3", "status"});
  EXPECT_EQ(r.rc, bpctl::kExitBadValue);
  EXPECT_NE(r.err.find("only db 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace bp::test
