// export then import: the same configuration, exactly, into a target that
// was reset or configured differently; bucket and queue state are kept.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

using bpctl::kExitOk;

class BpctlConfigIo : public BpctlSuite {
 protected:
  // Caps, weights and non-default tuning on the current target.
  void Configure() {
    ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "100", "--tpm", "720000", "--burst-s", "0.25"}).rc,
              kExitOk);
    ASSERT_EQ(Bpctl({"set", "priority-weights", "0.5,0.3,0.2"}).rc, kExitOk);
    ASSERT_EQ(Bpctl({"set", "weight", "acme", "2"}).rc, kExitOk);
    ASSERT_EQ(Bpctl({"set", "weight", "beta.1", "0.1"}).rc, kExitOk);
    GateTuning t;
    t.slack_ms = 20;
    t.lend_fraction = 0.75;
    t.grace_ms = 150;
    t.ticket_ttl_ms = 30000;
    ASSERT_TRUE(MakeGate()->SetTuning(t).ok());
  }
};

TEST_F(BpctlConfigIo, ExportShowsTheConfiguration) {
  Configure();
  EXPECT_EQ(Bpctl({"export"}).out, R"({
  "version": 1,
  "caps": {
    "requests_per_s": 1.6666666666666667,
    "tokens_per_s": 12000.0,
    "burst_s": 0.25
  },
  "priority_weights": [
    0.5,
    0.3,
    0.2
  ],
  "tenant_weights": {
    "acme": 2.0,
    "beta.1": 0.1
  },
  "tuning": {
    "slack_ms": 20.0,
    "lend_fraction": 0.75,
    "grace_ms": 150.0,
    "ticket_ttl_ms": 30000,
    "adapt": false,
    "adapt_beta": 0.7,
    "adapt_recover_ms": 120000.0,
    "adapt_window_ms": 2000.0,
    "adapt_min_429": 4,
    "share_rule": "hier",
    "class_policy": "fair"
  }
}
)");
}

TEST_F(BpctlConfigIo, ExportThenImportRestoresTheSameState) {
  Configure();
  const BpctlRun exported = Bpctl({"export"});
  ASSERT_EQ(exported.rc, kExitOk) << exported.err;
  const std::string file = WriteFile("gate.json", exported.out);
  // Into the same target after reset --all (nothing left).
  ASSERT_EQ(Bpctl({"reset", "--all"}).rc, kExitOk);
  BpctlRun r = Bpctl({"import", file});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": imported " + file +
                       ": caps 1.6666666666666667 req/s (100 rpm), 12000 tok/s (720000 tpm), "
                       "burst 0.25 s, 3 priority class(es), 2 tenant weight(s)\n");
  EXPECT_EQ(Bpctl({"export"}).out, exported.out);
  // Into another target configured differently: import replaces all of it.
  target_ += "-copy";
  ASSERT_TRUE(MakeGate()->Reset().ok());
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "60"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "priority-weights", "1,1,1,1"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "weight", "zzz", "5"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"import", file}).rc, kExitOk);
  EXPECT_EQ(Bpctl({"export"}).out, exported.out);
  // Nothing of the classes and tenants the file does not name is left: the
  // keys hold what the first target, given the file alone, holds.
  EXPECT_EQ(SnapshotAs(target_), SnapshotAs(target_.substr(0, target_.size() - 5)));
  // The gate uses it at once: cfg is rebuilt, 1.6666666666666667 req/s * 0.25 s.
  auto g = MakeGate();
  Decision d = g->gate().Admit(AdmitRequest{"acme", 1, Cost{1, 0}, 0, kT0});
  // 1 request > capacity 0.41666666666666669, within the default max cost
  // (100 requests, one minute of cap): admitted from the full bucket into debt.
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_NEAR(g->State()->l1_requests, 1.6666666666666667 * 0.25 - 1, 1e-12);
}

TEST_F(BpctlConfigIo, ImportKeepsBucketAndQueueState) {
  Configure();
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);  // capacity 2.5
  auto g = MakeGate();
  ASSERT_EQ(g->gate().Admit(AdmitRequest{"acme", 1, Cost{1, 0}, 0, kT0}).verdict, Verdict::kAdmit);
  const std::string file = WriteFile("gate.json", Bpctl({"export"}).out);
  ASSERT_EQ(Bpctl({"import", file}).rc, kExitOk);
  auto st = g->State();
  ASSERT_EQ(st->queues.size(), 1u);
  EXPECT_EQ(st->queues[0].admits, 1);
  EXPECT_NEAR(st->l1_requests, 1.5, 1e-12);  // 2.5 -> 1.5
}

// `import -` reads standard input (it opened a file named "-": exit 5).
TEST_F(BpctlConfigIo, ImportDashReadsStandardInput) {
  Configure();
  const BpctlRun exported = Bpctl({"export"});
  ASSERT_EQ(exported.rc, kExitOk) << exported.err;
  target_ += "-stdin";
  ASSERT_TRUE(MakeGate()->Reset().ok());
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "60"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "weight", "zzz", "5"}).rc, kExitOk);
  std::istringstream in(exported.out);
  bpctl::RunContext context;
  context.in = &in;
  BpctlRun r = Bpctl({"import", "-"}, context);
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ +
                       ": imported stdin: caps 1.6666666666666667 req/s (100 rpm), 12000 tok/s "
                       "(720000 tpm), burst 0.25 s, 3 priority class(es), 2 tenant weight(s)\n");
  EXPECT_EQ(Bpctl({"export"}).out, exported.out);  // zzz's weight gone, as from a file
  // Bad input on stdin: exit 3 with the reason, nothing written.
  const std::string before = Snapshot();
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"", "bpctl: stdin: empty file (expected the JSON of `bpctl export`)\n"},
           {R"({"version":1,"caps":{"requests_per_s":1},"tenant_weights":{"a":1e300}})",
            "bpctl: stdin: tenant_weights.a: must be a number in [1e-06, 1e+06], got 1e+300\n"}}) {
    std::istringstream bad(text);
    context.in = &bad;
    BpctlRun b = Bpctl({"import", "-"}, context);
    EXPECT_EQ(b.rc, bpctl::kExitBadValue) << text;
    EXPECT_EQ(b.err, message);
  }
  EXPECT_EQ(Snapshot(), before);
}

// The binary reads its real standard input: `bpctl export | bpctl import -`.
TEST_F(BpctlConfigIo, BinaryImportsFromAPipe) {
  const std::string binary = std::string(BP_BINARY_DIR) + "/apps/bpctl";
  ASSERT_EQ(access(binary.c_str(), X_OK), 0) << binary << " is not built (test_bpctl needs it)";
  Configure();
  const std::string exported = Bpctl({"export"}).out;
  const std::string source = target_;
  target_ += "-pipe";
  ASSERT_TRUE(MakeGate()->Reset().ok());
  const std::string command = binary + " --valkey " + server_->url() + " --target " + source +
                              " export | " + binary + " --valkey " + server_->url() + " --target " +
                              target_ + " --create import - >/dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_EQ(WEXITSTATUS(status), 0) << command;
  EXPECT_EQ(Bpctl({"export"}).out, exported);
}

}  // namespace
}  // namespace bp::test
