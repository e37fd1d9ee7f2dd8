// Two worker processes (fork: separate address spaces, connections and
// router state) share one gate target on a real 3-primary cluster, each with
// its own tenant, admitting back to back for 2 s on the server's clock: the
// combined admissions stay within C * span + burst (P1 across processes), and
// after a 500 ms warm-up (the cold burst goes to whoever starts first, by
// lending) each process gets about half (P2 across processes, equal weights).
// Counts only; the span is measured around both processes, so it can only
// overstate the bound.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "support/valkey_cluster.h"

namespace bp::test {
namespace {

using Clock = std::chrono::steady_clock;

struct ChildCounts {
  long long calls = 0, admits = 0, fail_opens = 0;
  long long late_admits = 0;  // admitted after the warm-up
};

// In the child: admits as `tenant` until `end`, writes the counts to fd.
[[noreturn]] void ChildLoop(const GateOptions& options, const std::string& tenant,
                            Clock::time_point warm, Clock::time_point end, int fd) {
  Gate gate(options);
  ChildCounts c;
  for (auto now = Clock::now(); now < end; now = Clock::now()) {
    Decision d = gate.Admit(AdmitRequest{tenant, 1, {1, 0}, 0, 0});
    c.calls++;
    c.admits += d.verdict == Verdict::kAdmit;
    c.late_admits += d.verdict == Verdict::kAdmit && now >= warm;
    c.fail_opens += d.verdict == Verdict::kFailOpen;
  }
  char buf[128];
  const int n = std::snprintf(buf, sizeof buf, "%lld %lld %lld %lld\n", c.calls, c.admits,
                              c.fail_opens, c.late_admits);
  const bool written = n > 0 && ::write(fd, buf, static_cast<size_t>(n)) == n;
  ::_exit(written ? 0 : 1);
}

TEST(GateProcesses, TwoProcessesShareOneTargetWithinTheCapAndFairly) {
  ValkeyTestCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  GateOptions o;
  o.url = cluster.url();
  o.target = "procs-t";
  o.command_timeout_ms = 2000;  // the test box is loaded
  o.connect_timeout_ms = 1000;
  const GateCaps caps{100, 0, 1.0};
  {
    GateAdmin setup(o);
    ASSERT_TRUE(setup.SetCaps(caps).ok());
  }
  constexpr int kProcesses = 2, kDurationMs = 2000, kWarmupMs = 500;
  int fds[kProcesses];
  pid_t pids[kProcesses];
  const auto start = Clock::now();
  const auto warm = start + std::chrono::milliseconds(kWarmupMs);
  const auto end = start + std::chrono::milliseconds(kDurationMs);
  for (int p = 0; p < kProcesses; ++p) {
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    pids[p] = ::fork();
    ASSERT_GE(pids[p], 0);
    if (pids[p] == 0) {
      ::close(pipefd[0]);
      ChildLoop(o, "proc" + std::to_string(p), warm, end, pipefd[1]);
    }
    ::close(pipefd[1]);
    fds[p] = pipefd[0];
  }
  ChildCounts counts[kProcesses];
  for (int p = 0; p < kProcesses; ++p) {
    int status = 0;
    ASSERT_EQ(::waitpid(pids[p], &status, 0), pids[p]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char buf[128] = {};
    ASSERT_GT(::read(fds[p], buf, sizeof buf - 1), 0);
    ::close(fds[p]);
    ASSERT_EQ(std::sscanf(buf, "%lld %lld %lld %lld", &counts[p].calls, &counts[p].admits,
                          &counts[p].fail_opens, &counts[p].late_admits),
              4);
  }
  const double span_s = std::chrono::duration<double>(Clock::now() - start).count();
  const long long total = counts[0].admits + counts[1].admits;
  const long long late = counts[0].late_admits + counts[1].late_admits;
  std::printf("  admits %lld / %lld (%lld / %lld after %d ms), calls %lld / %lld, %.2f s\n",
              counts[0].admits, counts[1].admits, counts[0].late_admits, counts[1].late_admits,
              kWarmupMs, counts[0].calls, counts[1].calls, span_s);
  EXPECT_EQ(counts[0].fail_opens + counts[1].fail_opens, 0);
  EXPECT_LE(total, caps.requests_per_s * (span_s + caps.burst_s));  // P1, combined
  EXPECT_GE(late, caps.requests_per_s * 1.0);                       // both admitted through the run
  for (const ChildCounts& c : counts) EXPECT_GE(c.late_admits, 0.35 * late);
}

}  // namespace
}  // namespace bp::test
