// The bp configuration against a fake bp::Admission (bp_configuration.h,
// MakeBpConfigurationOn): what the engine does with each verdict, and what it
// releases, without Valkey. The upstream is a real loopback HTTP server
// (engine_scripted_upstream.h); counts and values are exact.
#include <gtest/gtest.h>

#include <ctime>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bp/loadgen/bp_configuration.h"
#include "bp/loadgen/engine.h"
#include "bp/loadgen/workload.h"
#include "engine_scripted_upstream.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

using bp::test::ScriptedAnswer;
using bp::test::ScriptedUpstream;

// What the fake saw and what it answers; shared by the fake's instances.
struct Script {
  std::mutex mu;
  std::deque<Decision> answers;  // next Admit answers; empty: ADMIT ticket "t"
  // Each test ends on a REJECT: the pool runs its jobs in order on one
  // thread, so every Release before that last Admit has run (and releases
  // still queued at the end are drained, gate_pool_test.cpp).
  std::vector<AdmitRequest> admits;
  struct Released {
    std::string ticket;
    Cost actual;
    UpstreamReport report;
    bool refused = false;
  };
  std::vector<Released> released;
};

class FakeAdmission final : public Admission {
 public:
  explicit FakeAdmission(Script& s) : s_(s) {}
  Decision Admit(const AdmitRequest& request) override {
    std::lock_guard lock(s_.mu);
    s_.admits.push_back(request);
    if (s_.answers.empty()) return Decision{Verdict::kAdmit, "t", 0, ""};
    Decision d = s_.answers.front();
    s_.answers.pop_front();
    return d;
  }
  Status Release(const std::string& ticket, const Cost& actual, const UpstreamReport& report,
                 int64_t) override {
    std::lock_guard lock(s_.mu);
    s_.released.push_back({ticket, actual, report, false});
    return Status::Ok();
  }
  Status ReleaseRefused(const std::string& ticket, int64_t) override {
    std::lock_guard lock(s_.mu);
    s_.released.push_back({ticket, Cost{0, 0}, UpstreamReport{}, true});
    return Status::Ok();
  }
  GateCounters counters() const override { return GateCounters{}; }

 private:
  Script& s_;
};

// One tenant, one workflow of `activities` activities in sequence (prompt
// 10, max_tokens 5), a dispatch latency of `dispatch_ms` (speedup 1: real ms).
Workload Activities(int activities, double dispatch_ms = 0) {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("fake-admission");
  doc["dispatch_latency_ms"] = dispatch_ms;
  doc["tenants"][0]["priority"] = 2;
  doc["tenants"][0]["activities_per_workflow"] = activities;
  doc["priority_weights"] = {0.6, 0.4};
  return testing::BuildWorkload(doc);
}

RunRecords RunOnFake(const Workload& w, Script& script, const ScriptedUpstream& up,
                     bool feed_headers = true, int64_t admit_ahead_ms = 0) {
  auto configuration = MakeBpConfigurationOn(
      [&script]() -> std::unique_ptr<Admission> { return std::make_unique<FakeAdmission>(script); },
      1, 2000, feed_headers, admit_ahead_ms);
  EngineOptions o;
  auto endpoint = ParseHttpUrl(up.url());
  EXPECT_TRUE(endpoint.ok());
  o.upstream = *endpoint;
  Engine engine(w, o, *configuration);
  return engine.Run();
}

TEST(BpAdmission, RejectFailsTheActivityWithoutCallingUpstream) {
  const Workload w = Activities(1);
  Script script;
  script.answers.push_back(Decision{Verdict::kReject, "", 0, "cost above max"});
  ScriptedUpstream up({});
  RunRecords r = RunOnFake(w, script, up);
  ASSERT_EQ(r.activities.size(), 1u);
  EXPECT_FALSE(r.activities[0].ok);
  EXPECT_EQ(r.activities[0].fail_cause, "gate_reject");
  EXPECT_EQ(up.requests(), 0);
  ASSERT_EQ(script.admits.size(), 1u);
  EXPECT_EQ(script.admits[0].tenant, "t1");
  EXPECT_EQ(script.admits[0].priority, 2);
  EXPECT_EQ(script.admits[0].cost.requests, 1);
  EXPECT_EQ(script.admits[0].cost.tokens, 10);
  EXPECT_EQ(script.admits[0].max_tokens, 5);
  EXPECT_TRUE(script.released.empty());
}

Decision Admit(const std::string& ticket) { return Decision{Verdict::kAdmit, ticket, 0, ""}; }
Decision Reject() { return Decision{Verdict::kReject, "", 0, "end of test"}; }

TEST(BpAdmission, DeferThenAdmitReleasesTheReportedUsageOnce) {
  const Workload w = Activities(2);
  Script script;
  script.answers = {Decision{Verdict::kDefer, "", 20, "fair"}, Admit("t"), Reject()};
  ScriptedUpstream up({});  // 200 with usage 10 prompt + 20 completion
  RunRecords r = RunOnFake(w, script, up);
  ASSERT_EQ(r.activities.size(), 2u);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_EQ(r.activities[0].executions, 2);  // the DEFER freed the slot
  EXPECT_EQ(r.activities[1].fail_cause, "gate_reject");
  EXPECT_EQ(up.requests(), 1);
  EXPECT_EQ(script.admits.size(), 3u);
  ASSERT_EQ(script.released.size(), 1u);
  EXPECT_EQ(script.released[0].ticket, "t");
  EXPECT_FALSE(script.released[0].refused);
  EXPECT_EQ(script.released[0].actual.requests, 1);
  EXPECT_EQ(script.released[0].actual.tokens, 30);
  EXPECT_EQ(script.released[0].report.outcome, UpstreamReport::Outcome::kOk);
}

// Two activities with a dispatch latency of `dispatch_ms`, the first
// admitted ahead with start_in_ms 30 (asked with ahead_ms 40), the second
// REJECTed to end the run.
RunRecords RunAdmittedAhead(double dispatch_ms, Script& script, const ScriptedUpstream& up) {
  Decision ahead = Admit("a");
  ahead.start_in_ms = 30;
  script.answers = {ahead, Reject()};
  return RunOnFake(Activities(2, dispatch_ms), script, up, true, 40);
}

// An ADMIT with start_in_ms (30) longer than the dispatch latency (10): the
// workflow sleeps on a durable timer of the difference (the slot freed),
// then the next execution calls with the ticket and asks the gate nothing;
// the wait is recorded with its cause, not as a DEFER.
TEST(BpAdmission, AdmittedAheadWaitsThenCallsWithTheTicket) {
  Script script;
  ScriptedUpstream up({});
  RunRecords r = RunAdmittedAhead(10, script, up);
  ASSERT_EQ(script.admits.size(), 2u);  // the call admitted ahead asked once
  EXPECT_EQ(script.admits[0].ahead_ms, 40);
  ASSERT_EQ(r.activities.size(), 2u);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_EQ(r.activities[0].executions, 2);
  EXPECT_EQ(r.activities[0].deferrals, 0);
  EXPECT_EQ(up.requests(), 1);
  ASSERT_EQ(script.released.size(), 1u);
  EXPECT_EQ(script.released[0].ticket, "a");
  EXPECT_EQ(script.released[0].actual.tokens, 30);
  EXPECT_EQ(r.gate_admits_ahead, 1u);
  EXPECT_EQ(r.gate_start_in_us, 30000);
  ASSERT_EQ(r.deferrals.size(), 1u);
  EXPECT_EQ(r.deferrals[0].cause, Outcome::kAdmittedAhead);
  EXPECT_EQ(r.deferrals[0].delay_us, 20000);  // 30 ms less the 10 ms dispatch
  // The call started no earlier than the wait after the admission.
  ASSERT_EQ(r.gate_decisions.size(), 2u);
  EXPECT_GE(r.activities[0].first_send_us - r.gate_decisions[0].at_us, 30000);
  EXPECT_EQ(r.activities[1].fail_cause, "gate_reject");
}

// A start_in_ms (30) within the dispatch latency (50) is waited in the slot:
// one execution, no timer, the call sent no earlier than 30 ms after.
TEST(BpAdmission, AShortAheadWaitKeepsTheSlot) {
  Script script;
  ScriptedUpstream up({});
  RunRecords r = RunAdmittedAhead(50, script, up);
  ASSERT_EQ(r.activities.size(), 2u);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_EQ(r.activities[0].executions, 1);
  EXPECT_TRUE(r.deferrals.empty());
  EXPECT_EQ(r.gate_admits_ahead, 1u);
  EXPECT_EQ(r.gate_start_in_us, 30000);
  ASSERT_EQ(script.released.size(), 1u);
  EXPECT_EQ(script.released[0].ticket, "a");
  ASSERT_EQ(r.gate_decisions.size(), 2u);
  EXPECT_GE(r.activities[0].first_send_us - r.gate_decisions[0].at_us, 30000);
}

TEST(BpAdmission, ThrottledCallIsReportedAndOverloadIsRefused) {
  const Workload w = Activities(2);
  Script script;
  script.answers = {Admit("a"), Admit("b"), Admit("c"), Reject()};
  // A 429 naming the token limit with retry-after-ms 40, then a 503, then OK.
  ScriptedUpstream up({ScriptedAnswer::Throttle(40, "tokens"), ScriptedAnswer{503, {}, "", 0}});
  RunRecords r = RunOnFake(w, script, up);
  ASSERT_EQ(r.activities.size(), 2u);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_EQ(up.requests(), 3);
  EXPECT_EQ(script.admits.size(), 4u);
  ASSERT_EQ(script.released.size(), 3u);
  EXPECT_EQ(script.released[0].ticket, "a");
  EXPECT_FALSE(script.released[0].refused);
  EXPECT_EQ(script.released[0].report.outcome, UpstreamReport::Outcome::kThrottled);
  EXPECT_EQ(script.released[0].report.bound, UpstreamReport::Bound::kTokens);
  EXPECT_DOUBLE_EQ(script.released[0].report.retry_after_ms, 40);  // speedup 1
  EXPECT_EQ(script.released[1].ticket, "b");
  EXPECT_TRUE(script.released[1].refused);  // the 503
  EXPECT_EQ(script.released[2].ticket, "c");
  EXPECT_FALSE(script.released[2].refused);
  EXPECT_EQ(script.released[2].actual.tokens, 30);
}

// A served call's rate-limit headers go to the gate with its release (the
// header rule), as a worker that sees only the HTTP answer reads them; with
// gate.adapt_headers false (feed_headers) they do not.
TEST(BpAdmission, ServedCallsCarryTheirRateLimitHeadersUnlessTurnedOff) {
  const ScriptedAnswer ok{200,
                          {{"x-ratelimit-remaining-requests", "7"},
                           {"x-ratelimit-reset-requests", "250ms"},
                           {"x-ratelimit-remaining-tokens", "900"},
                           {"x-ratelimit-reset-tokens", "1.5s"}},
                          "",
                          0};
  for (bool feed : {true, false}) {
    Script script;
    script.answers = {Admit("a"), Reject()};
    ScriptedUpstream up({ok});
    RunOnFake(Activities(1), script, up, feed);
    ASSERT_EQ(script.released.size(), 1u) << feed;
    const UpstreamReport& rep = script.released[0].report;
    EXPECT_EQ(rep.outcome, UpstreamReport::Outcome::kOk);
    EXPECT_EQ(rep.remaining_requests, feed ? 7 : -1);
    EXPECT_EQ(rep.reset_requests_ms, feed ? 250 : -1);
    EXPECT_EQ(rep.remaining_tokens, feed ? 900 : -1);
    EXPECT_EQ(rep.reset_tokens_ms, feed ? 1500 : -1);
  }
}

TEST(BpAdmission, AnthropicRateLimitHeadersFeedTheSameReport) {
  // An Anthropic answer: remaining counts and RFC 3339 instants of full
  // replenishment, 60 s ahead of the wall clock at the answer's writing.
  const std::time_t at = std::time(nullptr) + 60;
  std::tm tm{};
  gmtime_r(&at, &tm);
  char instant[40];
  std::strftime(instant, sizeof instant, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const ScriptedAnswer ok{200,
                          {{"anthropic-ratelimit-requests-remaining", "4"},
                           {"anthropic-ratelimit-requests-reset", instant},
                           {"anthropic-ratelimit-tokens-remaining", "12000"},
                           {"anthropic-ratelimit-tokens-reset", instant}},
                          "",
                          0};
  Script script;
  script.answers = {Admit("a"), Reject()};
  ScriptedUpstream up({ok});
  RunOnFake(Activities(1), script, up, true);
  ASSERT_EQ(script.released.size(), 1u);
  const UpstreamReport& rep = script.released[0].report;
  EXPECT_EQ(rep.outcome, UpstreamReport::Outcome::kOk);
  EXPECT_EQ(rep.remaining_requests, 4);
  EXPECT_EQ(rep.remaining_tokens, 12000);
  // 60 s ahead when written, less the run's time until the answer was read
  // (and up to 1 s of the whole second printed).
  EXPECT_GT(rep.reset_requests_ms, 50000);
  EXPECT_LE(rep.reset_requests_ms, 60000);
  EXPECT_EQ(rep.reset_tokens_ms, rep.reset_requests_ms);
}

}  // namespace
}  // namespace bp::loadgen
