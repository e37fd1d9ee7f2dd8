// One short scenario per event type (scenario.h) against a real mockapi and
// a real Valkey/Redis, at speedup 10 (each run about a second). The checks
// are what the events must do, not speeds: who ran when, what mockapi and
// the gate hold afterwards, that outside calls are kept apart, and that a
// paused or restarted Valkey loses no activity.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/loadgen/http_client.h"
#include "bp/loadgen/metrics.h"
#include "bp/loadgen/runner.h"
#include "bp/loadgen/scenario_metrics.h"
#include "mockapi_process.h"
#include "support/valkey_server.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

// Options for a tool call on `target` at `url`.
GateOptions GateAt(const std::string& url, const std::string& target) {
  GateOptions o;
  o.url = url;
  o.target = target;
  return o;
}

using nlohmann::json;

// Three tenants (a, b in P1; late in P2) on 60 req/s; `workflows` each of one
// activity; the run stops at cap_s paper seconds.
Workload ScenarioWorkload(const json& events, int workflows = 100000, double cap_s = 8) {
  json doc = testing::OneTenantWorkloadDoc("scn");
  doc.erase("dispatch_latency_ms");  // the engine's default
  doc["slots"] = 20;
  doc["run_length_cap_s"] = cap_s;
  doc["priority_weights"] = {0.5, 0.5};
  doc["gate"] = {{"burst_s", 0.1}};
  doc["upstream"]["latency"] = {{"min_ms", 50}, {"max_ms", 150}};
  doc["events"] = events;
  doc["tenants"] = json::array();
  for (const char* id : {"a", "b", "late"}) {
    doc["tenants"].push_back({{"id", id},
                              {"priority", std::string(id) == "late" ? 2 : 1},
                              {"concurrency", 6},
                              {"workflows", workflows},
                              {"prompt_tokens", 100},
                              {"max_tokens", 50}});
  }
  return testing::BuildWorkload(doc);
}

class EngineScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string bin = bp::test::MockapiBinary();
    ASSERT_FALSE(bin.empty()) << bp::test::kNoMockapi;
    mockapi_ = std::make_unique<bp::test::MockapiProcess>(bin, std::vector<std::string>{});
    ASSERT_TRUE(mockapi_->running()) << "mockapi did not start: " << bin;
    ASSERT_TRUE(valkey_.running()) << valkey_.error();
  }
  RunRecords Run(const Workload& w, const std::string& config) {
    RunOptions o;
    o.configuration = config;
    o.speedup = 10;
    o.upstream_url = mockapi_->url();
    o.valkey_url = valkey_.url();
    o.valkey_pid = valkey_.pid();
    auto r = RunOnce(w, o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(*r) : RunRecords{};
  }
  std::unique_ptr<bp::test::MockapiProcess> mockapi_;
  bp::test::ValkeyServer valkey_;
};

TEST_F(EngineScenario, JoinAndLeave) {
  Workload w = ScenarioWorkload(json::parse(R"([
    {"type": "join", "at_s": 2, "tenant": "late"},
    {"type": "leave", "at_s": 5, "tenant": "late"}])"));
  RunRecords r = Run(w, "bp");
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_TRUE(r.events[0].applied && r.events[1].applied);
  const TenantInfo& late = r.tenants[2];
  EXPECT_GE(late.join_us, 200000);  // 2 paper s at speedup 10
  EXPECT_GE(late.leave_us, 500000);
  int64_t late_ok = 0, cancelled = 0, failed = 0;
  for (const ActivityRecord& a : r.activities) {
    EXPECT_FALSE(a.ok && a.cancelled);
    EXPECT_TRUE(!a.cancelled || a.tenant_index == 2);
    cancelled += a.cancelled ? 1 : 0;
    failed += (a.completed_us >= 0 && !a.ok && !a.cancelled) ? 1 : 0;
    if (a.tenant_index != 2) continue;
    EXPECT_GE(a.scheduled_us, late.join_us);   // nothing before it joined
    EXPECT_LE(a.scheduled_us, late.leave_us);  // nothing new after it left
    late_ok += a.ok ? 1 : 0;
  }
  EXPECT_GT(late_ok, 0);
  EXPECT_EQ(failed, 0);
  RunMetrics m = ComputeRunMetrics(r);
  EXPECT_EQ(m.cancelled_calls, cancelled);  // not counted as failures
  // The tenant that left does not end the contention window: a and b never finish.
  EXPECT_DOUBLE_EQ(m.contention_window_s, r.end_us * 10 / 1e6);
}

TEST_F(EngineScenario, UpstreamLimitsChangeMockapiNotTheGate) {
  Workload w = ScenarioWorkload(json::parse(R"([{"type": "upstream_limits", "at_s": 2,
    "limits": [{"dimension": "requests", "algorithm": "fixed_window", "limit": 30,
                "window_s": 1}]}])"));
  RunRecords r = Run(w, "bp");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_TRUE(r.events[0].applied) << r.events[0].detail;
  auto endpoint = ParseHttpUrl(mockapi_->url());
  ASSERT_TRUE(endpoint.ok());
  HttpResponse got = HttpRequestBlocking(*endpoint, "GET", "/admin/config", "", 5000);
  ASSERT_EQ(got.status, 200);
  json config = json::parse(got.body);
  EXPECT_EQ(config["limits"][0]["limit"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(config["limits"][0]["window_s"].get<double>(), 0.1);  // 1 s / 10
  GateAdmin gate(GateAt(valkey_.url(), r.gate_target));
  auto c = gate.Config();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->caps.requests_per_s, 600);  // 60 x 10: the gate was not told
}

TEST_F(EngineScenario, WeightAndOmegaGoThroughTheGate) {
  Workload w = ScenarioWorkload(json::parse(R"([
    {"type": "tenant_weight", "at_s": 2, "tenant": "a", "weight": 3},
    {"type": "class_omega", "at_s": 3, "priority": 2, "omega": 1.5}])"));
  RunRecords r = Run(w, "bp");
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_TRUE(r.events[0].applied) << r.events[0].detail;
  EXPECT_TRUE(r.events[1].applied) << r.events[1].detail;
  GateAdmin gate(GateAt(valkey_.url(), r.gate_target));
  auto c = gate.Config();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->tenant_weights.at("a"), 3);
  EXPECT_EQ(c->omega, (std::vector<double>{0.5, 1.5}));
  // Without a gate the events are recorded as not applicable.
  RunRecords naive = Run(w, "naive");
  ASSERT_EQ(naive.events.size(), 2u);
  EXPECT_FALSE(naive.events[0].applied);
  EXPECT_EQ(naive.events[0].detail, "not applicable: no gate in this configuration");
  // The report names the gate's server (summary.json "gate_server"); no gate, no server.
  auto server = gate.Server();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  EXPECT_EQ(r.gate_server, *server);
  EXPECT_EQ(naive.gate_server, "");
}

TEST_F(EngineScenario, OutsideTrafficIsRecordedApart) {
  Workload w = ScenarioWorkload(json::parse(R"([
    {"type": "outside_traffic", "at_s": 1, "share": 0.5},
    {"type": "outside_traffic", "at_s": 5, "share": 0}])"));
  RunRecords r = Run(w, "naive");
  ASSERT_EQ(r.events.size(), 2u);
  ASSERT_FALSE(r.outside_attempts.empty());
  // 30 paper req/s for 4 paper s at most, paced from the start event.
  EXPECT_LE(r.outside_attempts.size(), 121u);
  for (const AttemptRecord& a : r.outside_attempts) {
    EXPECT_EQ(a.tenant_index, -1);
    EXPECT_GE(a.send_us, r.events[0].at_us);
    EXPECT_LE(a.send_us, r.events[1].at_us);
    // Its use of the token dimension: the usage of an OK answer, prompt 100
    // plus at most max_tokens 50 (the event's defaults); nothing otherwise.
    if (a.status == 200) {
      EXPECT_GE(a.tokens, 100);
      EXPECT_LE(a.tokens, 150);
    } else {
      EXPECT_EQ(a.tokens, 0);
    }
  }
  for (const AttemptRecord& a : r.attempts) EXPECT_GE(a.tenant_index, 0);
  ScenarioMetrics sm = ComputeScenarioMetrics(r, w.events);
  EXPECT_EQ(
      sm.outside_responses, static_cast<int64_t>(r.outside_attempts.size()) - [&] {
        int64_t n = 0;
        for (const auto& a : r.outside_attempts) n += a.status == 0 ? 1 : 0;
        return n;
      }());
}

// Bounded work (3 x 40 activities, about 2 paper s of cap) around an outage
// of 3 paper s: everything must complete.
void ExpectAllDone(const Workload& w, const RunRecords& r) {
  int64_t ok = 0;
  for (const ActivityRecord& a : r.activities) ok += a.ok ? 1 : 0;
  EXPECT_EQ(ok, w.total_activities());
  for (const WorkflowRecord& wf : r.workflows) EXPECT_GE(wf.end_us, 0);
  EXPECT_EQ(ComputeRunMetrics(r).gate_fail_opens, r.gate_fail_opens);
}

TEST_F(EngineScenario, PausedValkeyFailsOpenAndLosesNothing) {
  Workload w = ScenarioWorkload(json::parse(R"([
    {"type": "state_outage", "at_s": 0.5, "duration_s": 3, "mode": "pause"}])"),
                                40, 30);
  RunRecords r = Run(w, "bp");
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_TRUE(r.events[0].applied) << r.events[0].detail;
  EXPECT_EQ(r.events[1].detail, "SIGCONT");
  ExpectAllDone(w, r);
  EXPECT_GT(r.gate_fail_opens, 0u);
  ScenarioMetrics sm = ComputeScenarioMetrics(r, w.events);
  EXPECT_GT(sm.events[0].during.fail_opens, 0);
  GateAdmin gate(GateAt(valkey_.url(), "x"));
  EXPECT_TRUE(gate.Ping().ok());  // resumed
}

TEST_F(EngineScenario, StoppedValkeyIsRestartedAndTheGateReseedsIt) {
  // Admissions go on after the restart: 3000 activities are 50 paper s at
  // the cap; the run ends when they are done, and the 120 s cap leaves room
  // for a loaded machine (a 60 s cap ended a run at load 11 with 1909 done).
  Workload w = ScenarioWorkload(json::parse(R"([
    {"type": "state_outage", "at_s": 0.5, "duration_s": 3, "mode": "stop"}])"),
                                1000, 120);
  RunRecords r = Run(w, "bp");
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_TRUE(r.events[0].applied) << r.events[0].detail;
  EXPECT_TRUE(r.events[1].applied) << r.events[1].detail;
  int new_pid = 0;
  std::sscanf(r.events[1].detail.c_str(), "restarted as pid %d", &new_pid);
  ASSERT_GT(new_pid, 0) << r.events[1].detail;
  ExpectAllDone(w, r);
  // loadgen restarted an empty server and imported nothing: the gate threads
  // re-seeded the target from their declared configuration, once.
  EXPECT_EQ(r.gate_reseeds, 1u);
  EXPECT_EQ(r.gate_fail_opens_unconfigured, 0u);
  EXPECT_EQ(r.gate_fail_opens, r.gate_fail_opens_unreachable + r.gate_fail_opens_timed_out);
  GateAdmin gate(GateAt(valkey_.url(), r.gate_target));
  auto c = gate.Config();
  EXPECT_TRUE(c.ok() && c->configured);
  ::kill(new_pid, SIGTERM);  // the restarted server is this process's child
  int status = 0;
  ::waitpid(new_pid, &status, 0);
}

TEST_F(EngineScenario, OutageNeverSignalsAProcessThatIsNotTheServer) {
  Workload w = ScenarioWorkload(json::parse(R"([
    {"type": "state_outage", "at_s": 0.5, "duration_s": 1, "mode": "stop"}])"),
                                40, 30);
  const pid_t other = ::fork();  // a bystander: a wrong --valkey-pid
  if (other == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(other, 0);
  RunOptions o;
  o.configuration = "bp";
  o.speedup = 10;
  o.upstream_url = mockapi_->url();
  o.valkey_url = valkey_.url();
  o.valkey_pid = other;
  auto r = RunOnce(w, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GE(r->events.size(), 1u);
  EXPECT_FALSE(r->events[0].applied);
  EXPECT_EQ(r->events[0].detail.rfind("not applied: pid " + std::to_string(other) +
                                          " is not the Valkey server at " + valkey_.url() +
                                          " (its process_id is " + std::to_string(valkey_.pid()),
                                      0),
            0u)
      << r->events[0].detail;
  int status = 0;
  EXPECT_EQ(::waitpid(other, &status, WNOHANG), 0);  // not stopped, not killed
  ::kill(other, SIGKILL);
  ::waitpid(other, &status, 0);
  // A pid file without a pid is named as such (it said "no --valkey-pid /
  // --valkey-pidfile given").
  const std::string pidfile = ::testing::TempDir() + "bp-garbage.pid";
  std::ofstream(pidfile) << "garbage\n";
  o.valkey_pid = 0;
  o.valkey_pidfile = pidfile;
  r = RunOnce(w, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GE(r->events.size(), 1u);
  EXPECT_EQ(r->events[0].detail, "not applied: no pid in --valkey-pidfile " + pidfile);
  ASSERT_TRUE(Gate(GateAt(valkey_.url(), "x")).Ping().ok());
}

}  // namespace
}  // namespace bp::loadgen
