// A real Redis/Valkey Cluster of three primaries (no replicas) on loopback,
// started for one test and stopped and deleted after.
//
//   bp::test::ValkeyTestCluster cluster;      // starts 3 nodes, creates, waits
//   ASSERT_TRUE(cluster.ok()) << cluster.error();
//   options.url = cluster.url();              // "redis+cluster://127.0.0.1:P1,..."
//   cluster.StopNode(1); cluster.StartNode(1);  // a shard outage
//
// Each node runs with --cluster-enabled yes, its --cluster-config-file in a
// temporary directory, --cluster-require-full-coverage no (so a down shard
// leaves the others serving) and --cluster-node-timeout 2000. Ports are
// picked in 20000-29999 so that the cluster bus port (port + 10000) is free
// too. The cluster is created with `redis-cli --cluster create ...
// --cluster-replicas 0 --cluster-yes` (valkey-cli where installed), then
// waited for until every node reports cluster_state:ok (at most 20 s).
// Not thread-safe: drive it from the test thread (admissions may run in
// other threads against the nodes meanwhile).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace bp::test {

class ValkeyTestCluster {
 public:
  static constexpr int kNodes = 3;

  ValkeyTestCluster();  // starts and creates the cluster; see ok()
  ~ValkeyTestCluster();
  ValkeyTestCluster(const ValkeyTestCluster&) = delete;
  ValkeyTestCluster& operator=(const ValkeyTestCluster&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // Seed URL naming every node.
  std::string url() const;
  int port(int node) const { return ports_[node]; }
  std::string node_url(int node) const { return "redis://127.0.0.1:" + std::to_string(port(node)); }

  // Index of the node owning `slot` as that node's peers see it (CLUSTER
  // SLOTS on the first running node), or -1.
  int OwnerOf(int slot) const;
  std::string NodeId(int node) const;  // CLUSTER MYID

  // Moves `slot` with all its keys from its owner to node `to`, safely for
  // the gate's scripts (which declare only the state hash bp:{target}:state):
  // BeginMigration:
  //   1. `to`:    CLUSTER SETSLOT slot IMPORTING <owner id>
  //   2. owner:   MULTI; CLUSTER SETSLOT slot MIGRATING <to id>;
  //               MIGRATE host port "" 0 5000 KEYS <every key of the slot>; EXEC
  //   3. owner:   MIGRATE of keys created between listing and EXEC, if any
  //   (from here the owner answers ASK for the slot)
  // FinishMigration:
  //   4. `to`, then the owner, then the third node: CLUSTER SETSLOT slot NODE <to id>
  // Step 2 is one transaction, so no script runs against half-moved state.
  // Each returns "" or what failed. MigrateSlot = Begin, sleep, Finish.
  std::string BeginMigration(int slot, int to);
  std::string FinishMigration(int slot, int to);
  std::string MigrateSlot(int slot, int to, int ask_window_ms = 0);

  // A calls count from INFO commandstats of one node ("asking", "evalsha").
  long long CommandCalls(int node, const std::string& command) const;

  void StopNode(int node);   // SIGTERM (SIGKILL after 2 s), waits
  bool StartNode(int node);  // same port and config file; true once PONG

 private:
  bool Launch(int node);
  bool WaitClusterOk(int timeout_ms);

  std::string dir_;
  std::string server_binary_, cli_binary_;
  std::vector<int> ports_;
  std::vector<pid_t> pids_;
  std::string error_;
  int migrating_from_ = -1;  // between Begin and FinishMigration
};

}  // namespace bp::test
