// Gate admissions per second against the number of shards: the
// same closed-loop load on one Redis primary and on a 3-primary Redis
// Cluster, targets spread evenly over the shards.
//
//   build/bench/gate_shards_bench [--threads 6] [--seconds 3] [--queues 100]
//
// Starts its own servers on loopback (tests/support: setup's Valkey 9, or
// BP_SERVER=redis): one server, then a 3-primary cluster
// (tests/support/valkey_cluster.h, created with the cli's --cluster create). On each it configures one target
// per thread (chosen so that every shard owns threads / shards of them, the
// single server all), registers `queues` queues per target, all backlogged
// (deferred once under a tiny cap), raises the cap so every call is
// admitted, then runs `threads` client threads, each with its own bp::Gate
// (one connection) admitting round-robin over its target's queues for
// `seconds`. Prints one row per setup: admissions/s in total and per shard,
// and the mean EVALSHA server time per node (INFO commandstats).
// A closed loop: throughput is bounded by the clients and the machine's
// cores as well as by the servers; compare the two rows of one run.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "bp/valkey_cluster.h"
#include "support/valkey_cluster.h"
#include "support/valkey_server.h"

namespace {

struct Options {
  int threads = 6;
  double seconds = 3;
  int queues = 100;
};

struct Row {
  int shards = 0;
  double admissions_per_s = 0;
  double fail_opens = 0;
  std::vector<double> server_us_per_call;  // per node
};

// EVALSHA usec_per_call and calls of one node since CONFIG RESETSTAT.
double ServerUsPerEvalsha(const std::string& node_url) {
  bp::ValkeyConnection c(bp::ValkeyOptions{node_url, 1000, 5000});
  auto r = c.Command({"INFO", "commandstats"});
  if (!r.ok()) return -1;
  const auto at = r->str.find("cmdstat_evalsha:");
  if (at == std::string::npos) return 0;
  const auto u = r->str.find("usec_per_call=", at);
  return std::strtod(r->str.c_str() + u + 14, nullptr);
}

bool SetUpTarget(const std::string& url, const std::string& target, int queues) {
  bp::GateOptions o;
  o.url = url;
  o.target = target;
  o.command_timeout_ms = 5000;
  o.queue_ttl_ms = 3'600'000;
  bp::GateAdmin setup(o);
  if (!setup.Ping().ok() || !setup.Reset().ok()) return false;
  setup.SetPriorityWeights({0.5, 0.3, 0.2});
  setup.SetTuning(bp::GateTuning{50, 0.5, 600'000, 600'000});  // stay backlogged
  setup.SetCaps(bp::GateCaps{1, 0, 1.0});
  for (int i = 0; i < queues; ++i) {
    setup.gate().Admit(bp::AdmitRequest{"tenant" + std::to_string(i), 1 + i % 3, {1, 0}, 0, 0});
  }
  return setup.SetCaps(bp::GateCaps{1e9, 1e12, 1.0}).ok();
}

// Runs the load on `targets` (one thread each) through `url`.
Row Run(const std::string& url, const std::vector<std::string>& targets,
        const std::vector<std::string>& nodes, const Options& opt) {
  Row row;
  row.shards = static_cast<int>(nodes.size());
  for (const auto& t : targets) {
    if (!SetUpTarget(url, t, opt.queues)) {
      std::fprintf(stderr, "gate_shards_bench: setting up target %s failed\n", t.c_str());
      std::exit(1);
    }
  }
  for (const auto& n : nodes) {
    bp::ValkeyConnection c(bp::ValkeyOptions{n, 1000, 5000});
    c.Command({"CONFIG", "RESETSTAT"});
  }
  std::atomic<int64_t> admits{0}, fail_opens{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (const auto& t : targets) {
    threads.emplace_back([&, t] {
      bp::GateOptions o;
      o.url = url;
      o.target = t;
      o.command_timeout_ms = 5000;
      o.queue_ttl_ms = 3'600'000;
      bp::Gate gate(o);
      gate.Ping();
      while (!go.load()) std::this_thread::yield();
      const auto end = std::chrono::steady_clock::now() +
                       std::chrono::microseconds(static_cast<int64_t>(opt.seconds * 1e6));
      int64_t i = 0, n = 0;
      while (std::chrono::steady_clock::now() < end) {
        const int q = static_cast<int>(i % opt.queues);
        bp::Decision d =
            gate.Admit(bp::AdmitRequest{"tenant" + std::to_string(q), 1 + q % 3, {1, 100}, 0, 0});
        n += d.verdict == bp::Verdict::kAdmit;
        ++i;
      }
      admits += n;
      fail_opens += static_cast<int64_t>(gate.fail_open_count());
    });
  }
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  for (auto& th : threads) th.join();
  const double span = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  row.admissions_per_s = static_cast<double>(admits.load()) / span;
  row.fail_opens = static_cast<double>(fail_opens.load());
  for (const auto& n : nodes) row.server_us_per_call.push_back(ServerUsPerEvalsha(n));
  return row;
}

void Print(const Row& r, const Options& opt) {
  std::printf("| %d | %d | %d | %.0f | %.0f | %.0f |", r.shards, opt.threads, opt.queues,
              r.admissions_per_s, r.admissions_per_s / r.shards, r.fail_opens);
  for (double us : r.server_us_per_call) std::printf(" %.1f", us);
  std::printf(" |\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (flag == "--threads" && v >= 1) {
      opt.threads = static_cast<int>(v);
    } else if (flag == "--seconds" && v > 0) {
      opt.seconds = v;
    } else if (flag == "--queues" && v >= 1) {
      opt.queues = static_cast<int>(v);
    } else {
      std::fprintf(stderr,
                   "usage: gate_shards_bench [--threads N>=1] [--seconds S>0] "
                   "[--queues Q>=1]\n");
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "gate_shards_bench: every flag takes a value\n");
    return 2;
  }
  std::printf("server: %s\n\n", bp::test::FindValkeyBinary().c_str());
  std::printf(
      "| shards | client threads (one target each) | queues per target | "
      "admissions/s | per shard | fail-opens | EVALSHA server us/call per node |\n"
      "|---|---|---|---|---|---|---|\n");
  {
    bp::test::ValkeyServer server;
    if (!server.running()) {
      std::fprintf(stderr, "gate_shards_bench: %s\n", server.error().c_str());
      return 1;
    }
    std::vector<std::string> targets;
    for (int i = 0; i < opt.threads; ++i) targets.push_back("shards" + std::to_string(i));
    Print(Run(server.url(), targets, {server.url()}, opt), opt);
  }
  bp::test::ValkeyTestCluster cluster;
  if (!cluster.ok()) {
    std::fprintf(stderr, "gate_shards_bench: cluster: %s\n", cluster.error().c_str());
    return 1;
  }
  // Round-robin over the shards: the next target name whose slot the wanted
  // node owns.
  std::vector<std::string> targets;
  std::vector<std::string> nodes;
  for (int n = 0; n < bp::test::ValkeyTestCluster::kNodes; ++n)
    nodes.push_back(cluster.node_url(n));
  for (int i = 0, k = 0; static_cast<int>(targets.size()) < opt.threads; ++k) {
    const std::string t = "shards" + std::to_string(k);
    if (cluster.OwnerOf(bp::KeySlot(t)) == i % bp::test::ValkeyTestCluster::kNodes) {
      targets.push_back(t);
      ++i;
    }
  }
  Print(Run(cluster.url(), targets, nodes, opt), opt);
  return 0;
}
