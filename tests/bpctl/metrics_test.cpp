// bpctl metrics --once: exact counter samples after known admissions, the
// per-tenant opt-in (none by default, the top N, a listed set), bad flags,
// and the exposition through `promtool check metrics` (Prometheus' own
// linter; skipped only when promtool is not installed, scripts/setup.sh
// installs Debian's prometheus package, which has it).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bp/bpctl/metrics.h"
#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

class BpctlMetrics : public BpctlSuite {
 protected:
  // Class 1: a twice, b once; class 2: c once and deferred once (B_r = 3).
  void Load() {
    ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "180", "--tpm", "60000", "--burst-s", "1"}).rc, 0);
    ASSERT_EQ(Bpctl({"set", "priority-weights", "0.75,0.25"}).rc, 0);
    auto gate = MakeGate();
    const std::pair<const char*, int> calls[] = {{"a", 1}, {"a", 1}, {"b", 1}, {"c", 2}};
    int admitted = 0;
    for (auto [tenant, k] : calls) {
      Decision d = gate->gate().Admit(AdmitRequest{tenant, k, {1, 100}, 0, kT0});
      if (d.verdict == Verdict::kAdmit) {
        ++admitted;
        ASSERT_TRUE(gate->gate().Release(d.ticket, {1, 70}, kT0).ok());  // 30 refunded
      }
    }
    ASSERT_EQ(admitted, 3);  // the 4th call finds L1 empty
  }
  std::string Sample(const std::string& name, const std::string& labels) const {
    return name + "{target=\"" + target_ + "\"" + labels + "}";
  }
};

bool HavePromtool() { return std::system("promtool --version > /dev/null 2>&1") == 0; }

TEST_F(BpctlMetrics, CountersPerClassAreExact) {
  Load();
  BpctlRun r = Bpctl({"metrics", "--once"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string& m = r.out;
  EXPECT_NE(m.find(Sample("bp_gate_admitted_calls_total", ",class=\"1\"") + " 3\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(Sample("bp_gate_admitted_calls_total", ",class=\"2\"") + " 0\n"),
            std::string::npos);
  EXPECT_NE(m.find(Sample("bp_gate_deferred_calls_total", ",class=\"2\",binding=\"l1_requests\"") +
                   " 1\n"),
            std::string::npos);
  EXPECT_NE(m.find(Sample("bp_gate_admitted_tokens_total", ",class=\"1\"") + " 300\n"),
            std::string::npos);
  EXPECT_NE(m.find(Sample("bp_gate_refunded_tokens_total", ",class=\"1\"") + " 90\n"),
            std::string::npos);  // 3 x (100 - 70)
  EXPECT_NE(m.find(Sample("bp_gate_class_share_configured", ",class=\"1\"") + " 0.75\n"),
            std::string::npos);
  EXPECT_NE(m.find(Sample("bp_gate_cap_requests_per_second", "") + " 3\n"), std::string::npos);
  EXPECT_NE(m.find(Sample("bp_gate_up", "") + " 1\n"), std::string::npos);
  EXPECT_EQ(m.find("bp_gate_tenant_admitted_calls_total{"), std::string::npos);  // opt-in only
}

TEST_F(BpctlMetrics, TenantSeriesAreOptIn) {
  Load();
  BpctlRun top = Bpctl({"metrics", "--once", "--tenants-top", "1"});
  ASSERT_EQ(top.rc, 0) << top.err;
  EXPECT_NE(top.out.find(Sample("bp_gate_tenant_admitted_calls_total",
                                ",class=\"1\",tenant=\"a\"") + " 2\n"),
            std::string::npos)
      << top.out;
  EXPECT_EQ(top.out.find("tenant=\"b\""), std::string::npos);
  BpctlRun listed = Bpctl({"metrics", "--once", "--tenants", "c,b"});
  ASSERT_EQ(listed.rc, 0) << listed.err;
  EXPECT_NE(listed.out.find(Sample("bp_gate_tenant_deferred_calls_total",
                                   ",class=\"2\",tenant=\"c\"") + " 1\n"),
            std::string::npos);
  EXPECT_NE(listed.out.find("tenant=\"b\""), std::string::npos);
  EXPECT_EQ(listed.out.find("tenant=\"a\""), std::string::npos);
}

TEST_F(BpctlMetrics, BadFlagsAreRefused) {
  EXPECT_EQ(Bpctl({"metrics"}).rc, 2);
  EXPECT_EQ(Bpctl({"metrics", "--once", "--listen", "127.0.0.1:0"}).rc, 2);
  BpctlRun r = Bpctl({"metrics", "--once", "--tenants", "a,b c"});
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("'b c' is not a tenant name"), std::string::npos) << r.err;
  r = Bpctl({"metrics", "--listen", "localhost:x"});
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("--listen port must be an integer in [0, 65535], got 'x'"),
            std::string::npos)
      << r.err;
}

TEST_F(BpctlMetrics, ExpositionPassesPromtool) {
  if (!HavePromtool()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  Load();
  BpctlRun r = Bpctl({"metrics", "--once", "--tenants-top", "10"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto path = std::filesystem::temp_directory_path() / ("bp-metrics-" + target_ + ".txt");
  std::ofstream(path) << r.out;
  const std::string cmd = "promtool check metrics < '" + path.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  std::filesystem::remove(path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out << "\n" << r.out;
}

}  // namespace
}  // namespace bp::test
