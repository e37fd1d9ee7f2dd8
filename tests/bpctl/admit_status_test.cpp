// status (--json), watch and admit (--dry-run) against a real server. Script
// clocks are set an hour after the server's time, so status (which refills
// L1 to the server's time) shows the levels the last call left, exactly.
#include <chrono>
#include <thread>

#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

using bpctl::kExitOk;
using bpctl::kExitServer;
using json = nlohmann::ordered_json;

class BpctlAdmitStatus : public BpctlSuite {
 protected:
  // An hour after the server's clock: no refill between calls and status.
  int64_t Future() { return static_cast<int64_t>(MakeGate()->State()->server_time_ms) + 3'600'000; }
  std::vector<std::string> AdmitArgs(const std::string& tenant, int64_t now_ms, int64_t tokens) {
    return {"admit",
            "--tenant",
            tenant,
            "--priority",
            "1",
            "--requests",
            "1",
            "--tokens",
            std::to_string(tokens),
            "--now-ms",
            std::to_string(now_ms)};
  }
};

TEST_F(BpctlAdmitStatus, StatusJsonHasCapsLevelsClassesAndQueueCounters) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600", "--tpm", "60000"}).rc, kExitOk);  // 10, 1000/s
  ASSERT_EQ(Bpctl({"set", "priority-weights", "0.5,0.3,0.2"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "weight", "acme", "2"}).rc, kExitOk);
  const int64_t t = Future();
  ASSERT_EQ(Bpctl(AdmitArgs("acme", t, 100)).out.rfind("ADMIT ticket 1", 0), 0u);
  ASSERT_EQ(Bpctl(AdmitArgs("acme", t, 100)).out.rfind("ADMIT ticket 2", 0), 0u);
  BpctlRun d = Bpctl(AdmitArgs("acme", t, 900));  // 800 tokens left
  EXPECT_EQ(d.out, "DEFER 100 ms (binding: l1:tokens)\n");

  BpctlRun r = Bpctl({"status", "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const json s = json::parse(r.out);
  EXPECT_EQ(s["target"], target_);
  EXPECT_EQ(s["configured"], true);
  EXPECT_EQ(s["caps"]["requests_per_s"], 10.0);
  EXPECT_EQ(s["caps"]["tpm"], 60000.0);
  EXPECT_EQ(s["caps"]["max_cost_tokens"], 60000.0);  // default: one minute of cap
  EXPECT_EQ(s["l1"]["requests"]["level"], 8.0);  // 10 -> 8
  EXPECT_EQ(s["l1"]["requests"]["capacity"], 10.0);
  EXPECT_EQ(s["l1"]["requests"]["refill_per_s"], 10.0);
  EXPECT_EQ(s["l1"]["tokens"]["level"], 800.0);  // 1000 -> 800
  EXPECT_EQ(s["l1"]["last_call_ms"], static_cast<double>(t));
  EXPECT_EQ(s["priority_weights"], json::parse("[0.5,0.3,0.2]"));
  EXPECT_EQ(s["tenant_weights"], json::parse(R"({"acme":2.0})"));
  EXPECT_NEAR(s["virtual_time"].get<double>(), 0.4, 1e-12);  // acme's tag (alone)
  ASSERT_EQ(s["classes"].size(), 3u);
  const json& c1 = s["classes"][0];
  EXPECT_EQ(c1["nominal_share"], 0.5);
  EXPECT_EQ(c1["nominal_requests_per_s"], 5.0);
  EXPECT_EQ(c1["nominal_tokens_per_s"], 500.0);
  EXPECT_EQ(c1["admitted_requests"], 2.0);
  EXPECT_EQ(c1["admitted_tokens"], 200.0);
  EXPECT_EQ(s["classes"][2]["admitted_requests"], 0.0);
  ASSERT_EQ(s["queues"].size(), 1u);
  const json& q = s["queues"][0];
  EXPECT_EQ(q["tenant"], "acme");
  EXPECT_EQ(q["priority"], 1);
  EXPECT_EQ(q["weight"], 1.0);                      // 2 * 0.5
  // Two quanta of max(1/10, 100/1000) / w_q, w_q = omega_1 w_t / W_1 = 0.5.
  EXPECT_NEAR(q["tag"].get<double>(), 0.4, 1e-12);
  EXPECT_NEAR(q["lag"].get<double>(), 0, 1e-12);  // tag - V
  EXPECT_EQ(q["backlogged"], true);
  EXPECT_EQ(q["fair_share"], 1.0);  // alone in the backlog
  EXPECT_EQ(q["fair_requests_per_s"], 10.0);
  EXPECT_EQ(q["admits"], 2);
  EXPECT_EQ(q["defers"], 1);
  EXPECT_EQ(q["lent"], 0);

  BpctlRun text = Bpctl({"status"});
  ASSERT_EQ(text.rc, kExitOk);
  EXPECT_NE(text.out.find("caps     10 req/s (600 rpm), 1000 tok/s (60000 tpm), burst 1 s; "
                          "largest call 600 requests, 60000 tokens\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("L1 requests  8 / 10, refill 10/s"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("tenants  acme=2 (others 1)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1     acme    1       0.4  0    yes"), std::string::npos) << text.out;
}

TEST_F(BpctlAdmitStatus, StatusRightAfterSetWeightShowsTheNewShare) {
  // 1 req/s, burst 1: a's first call empties L1; a and b then wait in
  // class 1 with w = 1 each (W_1 = 2, shares 1/2).
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "60"}).rc, kExitOk);
  const int64_t t = Future();
  ASSERT_EQ(Bpctl(AdmitArgs("a", t, 0)).out.rfind("ADMIT", 0), 0u);
  ASSERT_EQ(Bpctl(AdmitArgs("a", t, 0)).out.rfind("DEFER", 0), 0u);
  ASSERT_EQ(Bpctl(AdmitArgs("b", t, 0)).out.rfind("DEFER", 0), 0u);
  // No admission between the weight and the read: the share is w_b's now.
  ASSERT_EQ(Bpctl({"set", "weight", "b", "3"}).rc, kExitOk);
  BpctlRun r = Bpctl({"status", "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const json s = json::parse(r.out);
  ASSERT_EQ(s["queues"].size(), 2u);
  EXPECT_EQ(s["queues"][0]["tenant"], "a");
  EXPECT_EQ(s["queues"][0]["fair_share"], 0.25);  // 1 / (2 + 3 - 1)
  EXPECT_EQ(s["queues"][1]["weight"], 3.0);
  EXPECT_EQ(s["queues"][1]["fair_share"], 0.75);  // 1/2 -> 3/4
  EXPECT_EQ(s["queues"][1]["fair_requests_per_s"], 0.75);
}

TEST_F(BpctlAdmitStatus, AdmitPrintsEachVerdict) {
  // 1 req/s, 100 tok/s; the provider serves at most 100 tokens per call.
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "60", "--tpm", "6000", "--max-cost-tokens", "100"}).rc,
            kExitOk);
  const int64_t t = Future();
  std::vector<std::string> args = AdmitArgs("a", t, 50);
  args.push_back("--json");
  BpctlRun r = Bpctl(args);
  EXPECT_EQ(r.out, R"({"verdict":"ADMIT","dry_run":false,"ticket":"1"})"
                   "\n");
  r = Bpctl(args);
  EXPECT_EQ(r.out, R"({"verdict":"DEFER","dry_run":false,"delta_ms":1000,"binding":"l1:requests"})"
                   "\n");
  r = Bpctl(AdmitArgs("a", t, 101));
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.out,
            "REJECT: request too large: 101 tokens exceed max_cost_tokens 100 (the provider's "
            "limit per window) by 1\n");
  // Reservation mode debits prompt + max_tokens: 10 + 60 > 50 tokens left.
  ASSERT_EQ(Bpctl({"reset"}).rc, kExitOk);
  r = Bpctl({"admit", "--tenant", "a", "--tokens", "10", "--max-tokens", "60", "--mode",
             "reservation", "--now-ms", std::to_string(t)});
  EXPECT_EQ(r.out, "ADMIT ticket 2\n");                   // the counter survives the reset
  EXPECT_NEAR(MakeGate()->State()->l1_tokens, 30, 1e-9);  // 100 -> 30
  // status shows O, the 60 tokens reserved beyond the prompt (the level may
  // refill to capacity + O).
  const json s = json::parse(Bpctl({"status", "--json"}).out);
  EXPECT_EQ(s["l1"]["tokens"]["reserved"], 60.0);
  EXPECT_EQ(s["l1"]["tokens"]["level"], 30.0);
  EXPECT_NE(Bpctl({"status"}).out.find("reserved 60 (refills up to capacity + reserved)"),
            std::string::npos);
}

TEST_F(BpctlAdmitStatus, DryRunChangesNothingAndMatchesTheRealDecision) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "120"}).rc, kExitOk);  // 2 req/s, capacity 2
  const int64_t t = Future();
  const std::vector<std::string> expected = {"ADMIT", "ADMIT",
                                             "DEFER 500 ms (binding: l1:requests)"};
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string before = Snapshot();
    std::vector<std::string> dry = AdmitArgs("a", t, 0);
    dry.push_back("--dry-run");
    BpctlRun d = Bpctl(dry);
    ASSERT_EQ(d.rc, kExitOk) << d.err;
    EXPECT_EQ(d.out, expected[i] + "   [dry run: nothing changed]\n");
    EXPECT_EQ(Snapshot(), before);  // no key changed, no scratch key left
    BpctlRun real = Bpctl(AdmitArgs("a", t, 0));
    EXPECT_EQ(real.out,
              i < 2 ? "ADMIT ticket " + std::to_string(i + 1) + "\n" : expected[i] + "\n");
    EXPECT_NE(Snapshot(), before);
  }
}

TEST_F(BpctlAdmitStatus, DryRunOnAnUnconfiguredTargetLeavesNoKeys) {
  BpctlRun r = Bpctl({"admit", "--tenant", "a", "--dry-run"});
  EXPECT_EQ(r.rc, kExitServer);
  EXPECT_NE(r.err.find("target not configured"), std::string::npos) << r.err;
  EXPECT_EQ(Snapshot(), "");
}

TEST_F(BpctlAdmitStatus, WatchPrintsFramesWithRates) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  ASSERT_EQ(Bpctl(AdmitArgs("a", Future(), 0)).rc, kExitOk);
  BpctlRun r = Bpctl({"watch", "--interval", "0.05", "--count", "2", "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  std::vector<json> frames;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) frames.push_back(json::parse(line));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_FALSE(frames[0]["queues"][0].contains("admits_per_s"));
  EXPECT_EQ(frames[1]["queues"][0]["admits_per_s"], 0.0);  // no admission in between
  EXPECT_EQ(frames[1]["classes"][0]["admitted_requests_per_s"], 0.0);
  BpctlRun text = Bpctl({"watch", "--interval", "0.05", "--count", "2"});
  ASSERT_EQ(text.rc, kExitOk);
  EXPECT_NE(text.out.find("\n----\ntarget " + target_), std::string::npos);
}

TEST_F(BpctlAdmitStatus, WatchRunsUntilStopped) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  std::atomic<bool> stop{false};
  bpctl::RunContext context;
  context.stop = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;  // what SIGINT does in apps/bpctl.cpp
  });
  const auto start = std::chrono::steady_clock::now();
  BpctlRun r = Bpctl({"watch", "--interval", "10"}, context);
  const auto took = std::chrono::steady_clock::now() - start;
  stopper.join();
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_LT(took, std::chrono::seconds(5));  // not the 10 s interval
  EXPECT_NE(r.out.find("target " + target_), std::string::npos);
}

}  // namespace
}  // namespace bp::test
