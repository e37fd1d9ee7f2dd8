// Adaptive caps through bpctl: `set adapt`, the configured vs learned caps in
// `status`, and `reset --learned`. The 429 is reported at a script time an
// hour ahead of the server's clock, so status (computed at the server's time)
// sees the learned fraction before any recovery: exact values.
#include <tuple>

#include "bp/bpctl/values.h"
#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

using bpctl::kExitBadValue;
using bpctl::kExitOk;
using bpctl::kExitUsage;
using json = nlohmann::ordered_json;

class BpctlAdapt : public BpctlSuite {
 protected:
  int64_t Future() { return static_cast<int64_t>(MakeGate()->State()->server_time_ms) + 3'600'000; }

  // One admitted call released as a 429 bound on `bound` at script time t.
  void Throttle(UpstreamReport::Bound bound, int64_t t) {
    auto g = MakeGate();
    Decision d = g->gate().Admit(AdmitRequest{"acme", 1, Cost{1, 100}, 0, t});
    ASSERT_EQ(d.verdict, Verdict::kAdmit);
    UpstreamReport r;
    r.outcome = UpstreamReport::Outcome::kThrottled;
    r.bound = bound;
    ASSERT_TRUE(g->gate().Release(d.ticket, Cost{1, 100}, r, t).ok());
  }

  json StatusJson() {
    BpctlRun r = Bpctl({"status", "--json"});
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    return json::parse(r.out);
  }
};

TEST_F(BpctlAdapt, StatusShowsConfiguredAndLearnedCapsResetDropsThem) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600", "--tpm", "60000"}).rc, kExitOk);  // 10, 1000/s
  BpctlRun r = Bpctl({"set", "adapt", "on", "--beta", "0.5", "--min-429", "1"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ +
                       ": adaptive caps on (beta 0.5, recovery 120000 ms, window 2000 ms, 1 429s "
                       "per window)\n");
  const json tuning = Export()["tuning"];
  EXPECT_EQ(tuning["adapt"], true);
  EXPECT_EQ(tuning["adapt_beta"], 0.5);
  EXPECT_EQ(tuning["adapt_min_429"], 1);
  const int64_t t = Future();
  Throttle(UpstreamReport::Bound::kTokens, t);

  json s = StatusJson();
  const json& a = s["learned_caps"];
  EXPECT_EQ(a["adapt"], true);
  EXPECT_EQ(a["requests_per_s"], 10.0);
  EXPECT_EQ(a["requests_fraction"], 1.0);
  EXPECT_EQ(a["requests_decreased_ms"], 0.0);
  EXPECT_EQ(a["tokens_per_s"], 500.0);  // 1000 * 0.5
  EXPECT_EQ(a["tokens_fraction"], 0.5);
  EXPECT_EQ(a["tokens_decreased_ms"], static_cast<double>(t));
  EXPECT_EQ(s["caps"]["tokens_per_s"], 1000.0);  // configured, unchanged
  EXPECT_EQ(s["l1"]["tokens"]["refill_per_s"], 500.0);
  EXPECT_EQ(s["l1"]["tokens"]["capacity"], 1000.0);  // the configured burst capacity
  BpctlRun text = Bpctl({"status"});
  EXPECT_NE(text.out.find("learned  adaptive caps on: requests 10 of 10 req/s (100.0%), tokens "
                          "500 of 1000 tok/s (50.0%)\n"),
            std::string::npos)
      << text.out;

  // reset --learned: back to the configured caps, configuration kept.
  const json before = Export();
  r = Bpctl({"reset", "--learned"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, "target " + target_ + ": learned caps dropped (the configured caps apply)\n");
  EXPECT_EQ(StatusJson()["learned_caps"]["tokens_per_s"], 1000.0);
  EXPECT_EQ(Export(), before);

  // Learned again, then `set adapt off` drops it too.
  Throttle(UpstreamReport::Bound::kRequests, t);
  EXPECT_EQ(StatusJson()["learned_caps"]["requests_per_s"], 5.0);
  ASSERT_EQ(Bpctl({"set", "adapt", "off"}).rc, kExitOk);
  s = StatusJson();
  EXPECT_EQ(s["learned_caps"]["adapt"], false);
  EXPECT_EQ(s["learned_caps"]["requests_per_s"], 10.0);
  EXPECT_EQ(Export()["tuning"]["adapt_beta"], 0.5);  // other fields kept
  // Off: a 429 teaches nothing.
  Throttle(UpstreamReport::Bound::kRequests, t);
  EXPECT_EQ(StatusJson()["learned_caps"]["requests_per_s"], 10.0);
}

TEST_F(BpctlAdapt, BadValuesChangeNothing) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  const std::string snapshot = Snapshot();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"set", "adapt", "on", "--beta", "1"},
        std::vector<std::string>{"set", "adapt", "on", "--beta", "x"},
        std::vector<std::string>{"set", "adapt", "on", "--recover-ms", "0"},
        std::vector<std::string>{"set", "adapt", "on", "--min-429", "1.5"},
        std::vector<std::string>{"set", "adapt", "on", "--min-429", "0"}}) {
    BpctlRun r = Bpctl(args);
    EXPECT_EQ(r.rc, kExitBadValue) << args.back() << " " << r.err;
  }
  // MODE is a word from a fixed list, as admit --mode: a usage error.
  BpctlRun maybe = Bpctl({"set", "adapt", "maybe"});
  EXPECT_EQ(maybe.rc, kExitUsage);
  EXPECT_EQ(maybe.err, "bpctl: set adapt: MODE must be on or off, got 'maybe'\n");
  // Checked before connecting, with the flag and its documented range named:
  // exit 3 even against a closed port. The upper ends are new: 1e300 ms of
  // recovery, an hour-long-plus window and 1e7 429s per window were taken.
  const std::string closed = "redis://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  for (const auto& [flag, value, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--beta", "1", "bpctl: --beta: must be a number in (0, 1), got '1'\n"},
           {"--beta", "0", "bpctl: --beta: must be a number in (0, 1), got '0'\n"},
           {"--beta", "nan", "bpctl: --beta: must be a number in (0, 1), got 'nan'\n"},
           {"--recover-ms", "0",
            "bpctl: --recover-ms: must be a number in (0, 86400000], got '0'\n"},
           {"--recover-ms", "-1",
            "bpctl: --recover-ms: must be a number in (0, 86400000], got '-1'\n"},
           {"--recover-ms", "1e300",
            "bpctl: --recover-ms: must be a number in (0, 86400000], got '1e300'\n"},
           {"--recover-ms", "86400001",
            "bpctl: --recover-ms: must be a number in (0, 86400000], got '86400001'\n"},
           {"--window-ms", "-1",
            "bpctl: --window-ms: must be a number in [0, 3600000], got '-1'\n"},
           {"--window-ms", "3600001",
            "bpctl: --window-ms: must be a number in [0, 3600000], got '3600001'\n"},
           {"--window-ms", "inf",
            "bpctl: --window-ms: must be a number in [0, 3600000], got 'inf'\n"},
           {"--min-429", "1.5",
            "bpctl: --min-429: must be an integer in [1, 1000000], got '1.5'\n"},
           {"--min-429", "1e300",
            "bpctl: --min-429: must be an integer in [1, 1000000], got '1e300'\n"},
           {"--min-429", "1000001",
            "bpctl: --min-429: must be an integer in [1, 1000000], got '1000001'\n"}}) {
    BpctlRun r = BpctlRaw({"--valkey", closed, "set", "adapt", "on", flag, value});
    EXPECT_EQ(r.rc, kExitBadValue) << flag << " " << value << " " << r.err;
    EXPECT_EQ(r.err, message);
  }
  // The same ranges in an import's tuning (exit 3, nothing written).
  for (const auto& [field, message] : std::vector<std::pair<std::string, std::string>>{
           {R"("adapt_recover_ms":1e300)",
            "tuning.adapt_recover_ms: must be a number in (0, 8.64e+07], got 1e+300"},
           {R"("adapt_window_ms":3600001)",
            "tuning.adapt_window_ms: must be a number in [0, 3.6e+06], got 3600001"},
           {R"("adapt_min_429":1000001)",
            "tuning.adapt_min_429: must be an integer in [1, 1000000], got 1000001"}}) {
    const std::string file = WriteFile(
        "t.json", R"({"version":1,"caps":{"requests_per_s":1},"tuning":{)" + field + "}}");
    BpctlRun r = Bpctl({"import", file});
    EXPECT_EQ(r.rc, kExitBadValue) << field << " " << r.err;
    EXPECT_EQ(r.err, "bpctl: " + file + ": " + message + "\n");
  }
  EXPECT_EQ(Bpctl({"reset", "--learned", "--all"}).rc, kExitUsage);
  EXPECT_EQ(Bpctl({"set", "adapt"}).rc, kExitUsage);
  EXPECT_EQ(Snapshot(), snapshot);
  // The ends of each range are accepted.
  ASSERT_EQ(Bpctl({"set", "adapt", "on", "--beta", "0.99", "--recover-ms", "86400000",
                   "--window-ms", "3600000", "--min-429", "1000000"})
                .rc,
            kExitOk);
  EXPECT_EQ(Export()["tuning"]["adapt_recover_ms"], 86400000.0);
  EXPECT_EQ(Export()["tuning"]["adapt_min_429"], 1000000);
  ASSERT_EQ(Bpctl({"set", "adapt", "off", "--window-ms", "0"}).rc, kExitOk);
  EXPECT_EQ(Export()["tuning"]["adapt_window_ms"], 0.0);
}

// The prelude's defaults (mirrored by GateTuning, GateSchema tests) lie inside
// the ranges bpctl documents, so an export of a default target imports.
TEST(BpctlAdaptRanges, PreludeDefaultsAreInside) {
  const GateTuning t;
  GateConfig c;
  c.configured = true;
  c.caps.requests_per_s = 1;
  c.tuning = t;
  EXPECT_TRUE(CheckGateConfigRanges(c).ok()) << CheckGateConfigRanges(c).message();
  EXPECT_TRUE(bpctl::ParseNumberIn(FormatNumber(t.adapt_beta, 17, Notation::kPlain), "b",
                                   kGateAdaptBetaRange)
                  .ok());
  EXPECT_LE(t.adapt_min_429, kMaxGateAdaptMin429);
}

}  // namespace
}  // namespace bp::test
