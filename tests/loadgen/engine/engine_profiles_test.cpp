// The provider profiles (docs/provider-profiles.md) as loadgen sees them:
// exact waits parsed from messages and bp's handling of each answer, then the
// SDK model and bp against a scripted upstream answering as each profile does
// (Azure retry-after-ms, Anthropic retry-after only, a bare 429, 503/529
// overloads). Timings are lower bounds with generous upper bounds, or upper
// bounds far below the wait a wrong rule would take.
#include <gtest/gtest.h>

#include "bp/loadgen/runner.h"
#include "bp/loadgen/upstream_wait.h"
#include "engine_scripted_upstream.h"
#include "support/valkey_server.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

using bp::test::ScriptedAnswer;
using bp::test::ScriptedUpstream;

TEST(UpstreamWait, ParsesTheWaitStatedInTheMessage) {
  EXPECT_EQ(ParseMessageWaitMs("Rate limit reached for m in organization o on requests per min "
                               "(RPM): Limit 3, Used 3, Requested 1. Please try again in 750ms."),
            750.0);
  EXPECT_EQ(ParseMessageWaitMs("... Please try again in 19.75s."), 19750.0);
  EXPECT_EQ(ParseMessageWaitMs("Please try again in 6m0s."), 360000.0);
  EXPECT_EQ(ParseMessageWaitMs("please try again in 1h2m3.5s"), 3723500.0);
  EXPECT_EQ(ParseMessageWaitMs("TRY AGAIN IN 2S"), 2000.0);
  EXPECT_EQ(ParseMessageWaitMs("Requests to the ChatCompletions_Create Operation ... have "
                               "exceeded call rate limit ... Please retry after 20 seconds."),
            20000.0);
  EXPECT_EQ(ParseMessageWaitMs("Please retry after 1 second."), 1000.0);
  // Anthropic's real message names no wait; garbage has none either.
  EXPECT_FALSE(ParseMessageWaitMs("Number of request tokens has exceeded your per-minute rate "
                                  "limit; see the response headers for current usage. Please "
                                  "reduce the prompt length or try again later.")
                   .has_value());
  EXPECT_FALSE(ParseMessageWaitMs("").has_value());
  EXPECT_FALSE(ParseMessageWaitMs("try again in a moment").has_value());
  EXPECT_FALSE(ParseMessageWaitMs("retry after 5 fortnights").has_value());
}

CallResult Answer(int status, std::optional<double> header_ms = {},
                  std::optional<double> message_ms = {}) {
  CallResult r;
  r.status = status;
  r.retry_after_paper_ms = header_ms;
  r.message_wait_paper_ms = message_ms;
  return r;
}

TEST(UpstreamWait, BpDefersByHeaderThenMessageThenBackoff) {
  auto a = BpActionForAnswer(Answer(429, 300.0, 9000.0), 0);
  EXPECT_EQ(a.kind, BpAnswerAction::kDefer);
  EXPECT_EQ(a.source, BpAnswerAction::kHeader);
  EXPECT_EQ(a.wait_paper_ms, 300.0);
  a = BpActionForAnswer(Answer(429, std::nullopt, 19750.0), 0);  // bare: the message
  EXPECT_EQ(a.source, BpAnswerAction::kMessage);
  EXPECT_EQ(a.wait_paper_ms, 19750.0);
  a = BpActionForAnswer(Answer(429, 0.0, 800.0), 0);  // a zero header says nothing
  EXPECT_EQ(a.source, BpAnswerAction::kMessage);
  EXPECT_EQ(a.wait_paper_ms, 800.0);
  // Nothing at all: the activity retry policy's backoff, per earlier throttle.
  for (auto [earlier, ms] : std::vector<std::pair<int, double>>{
           {0, 1000.0}, {1, 2000.0}, {2, 4000.0}, {6, 64000.0}, {7, 100000.0}, {50, 100000.0}}) {
    a = BpActionForAnswer(Answer(429), earlier);
    EXPECT_EQ(a.kind, BpAnswerAction::kDefer);
    EXPECT_EQ(a.source, BpAnswerAction::kBackoff);
    EXPECT_EQ(a.wait_paper_ms, ms) << earlier;
  }
  // Overloads are deferred the same way.
  a = BpActionForAnswer(Answer(529, 2500.0), 3);
  EXPECT_EQ(a.kind, BpAnswerAction::kDefer);
  EXPECT_EQ(a.wait_paper_ms, 2500.0);
  a = BpActionForAnswer(Answer(503), 1);
  EXPECT_EQ(a.kind, BpAnswerAction::kDefer);
  EXPECT_EQ(a.wait_paper_ms, 2000.0);
  // x-should-retry: false can never pass; other errors go to the retry policy.
  CallResult never = Answer(429);
  never.should_retry = false;
  EXPECT_EQ(BpActionForAnswer(never, 0).kind, BpAnswerAction::kFail);
  for (int status : {0, 400, 500, 502}) {
    EXPECT_EQ(BpActionForAnswer(Answer(status, 300.0), 0).kind, BpAnswerAction::kRetryLater)
        << status;
  }
}

TEST(UpstreamWait, WorkloadCarriesProfileAndOverloadInPaperUnits) {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("p");
  doc.erase("dispatch_latency_ms");
  doc["upstream"] = {{"profile", "anthropic"},
                     {"overload", {{"share", 0.1}, {"status", 529}, {"retry_after_ms", 2000}}},
                     {"limits",
                      {{{"dimension", "requests"},
                        {"algorithm", "fixed_window"},
                        {"limit", 5},
                        {"window_s", 1.0}}}}};
  auto w = ParseWorkload(doc, "p");
  ASSERT_TRUE(w.ok()) << w.status().message();
  // Paper units, PUT with "speedup" (mockapi scales: RealTimePatch's tests).
  EXPECT_EQ(w->upstream["profile"], "anthropic");
  EXPECT_EQ(w->upstream["overload"]["retry_after_ms"], 2000);
  EXPECT_EQ(w->upstream["overload"]["share"], 0.1);
  EXPECT_EQ(w->upstream["limits"][0]["window_s"], 1.0);
}

// One tenant, one slot, one activity; a cap the scripted upstream ignores.
Workload OneActivity() {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("profiles");
  doc["run_length_cap_s"] = 600;
  return testing::BuildWorkload(doc);
}

RunRecords RunOne(const std::string& config, const std::string& url, double speedup,
                  const std::string& valkey = "redis://127.0.0.1:1") {
  RunOptions o;
  o.configuration = config;
  o.speedup = speedup;
  o.upstream_url = url;
  o.valkey_url = valkey;
  o.configure_upstream = false;
  auto r = RunOnce(OneActivity(), o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : RunRecords{};
}

double Ms(int64_t us) { return static_cast<double>(us) / 1000.0; }
double Gap(const RunRecords& r, size_t i) {
  return Ms(r.attempts[i].send_us - r.attempts[i - 1].done_us);
}

ScriptedAnswer Scripted(int status, std::vector<std::pair<std::string, std::string>> headers,
                        std::string body) {
  return {status, std::move(headers), std::move(body), 0};
}

const char* kAzure429 =
    R"({"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation )"
    R"(under Azure OpenAI API version 2024-10-21 have exceeded call rate limit of your current )"
    R"(pricing tier (60 requests per min (RPM)). Please retry after 3 seconds."}})";
const char* kAnthropic429 =
    R"({"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed )"
    R"(your organization's rate limit. Please try again in 2s."},"request_id":"req_1"})";
const char* kBare429 =
    R"({"error":{"message":"Rate limit reached for m in organization o on requests per min )"
    R"((RPM): Limit 60, Used 60, Requested 1. Please try again in 20s.","type":"requests",)"
    R"("param":null,"code":"rate_limit_exceeded"}})";
const char* kOverloaded =
    R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";

TEST(EngineProfiles, SdkPrefersRetryAfterMsAsOnAzure) {
  // retry-after-ms 300 and retry-after 3: the SDK waits the milliseconds.
  ScriptedUpstream up(
      {Scripted(429, {{"retry-after-ms", "300"}, {"retry-after", "3"}}, kAzure429)});
  RunRecords r = RunOne("naive", up.url(), 1.0);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_GE(Gap(r, 1), 280);
  EXPECT_LT(Gap(r, 1), 2500);  // not 3 s
  EXPECT_EQ(r.activities[0].executions, 1);
}

TEST(EngineProfiles, SdkHonoursAnthropicRetryAfterSeconds) {
  // retry-after 1 (s, the server's clock) only: 1 s real; at speedup 4 the
  // backoff it would otherwise take is at most 125 ms.
  ScriptedUpstream up({Scripted(429, {{"retry-after", "1"}}, kAnthropic429)});
  RunRecords r = RunOne("naive", up.url(), 4.0);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_GE(Gap(r, 1), 950);
  EXPECT_LT(Gap(r, 1), 5000);
  EXPECT_TRUE(r.activities[0].ok);
}

TEST(EngineProfiles, SdkBacksOffOnABare429AndIgnoresTheMessage) {
  // No header: min(0.5 s * 2^n, 8 s) * (1 - 0.25 u), speedup 4 -> 94-125 ms, then
  // 188-250 ms; the message's 20 s (5 s real) is not what the SDK reads.
  ScriptedUpstream up({Scripted(429, {}, kBare429), Scripted(429, {}, kBare429)});
  RunRecords r = RunOne("naive", up.url(), 4.0);
  ASSERT_EQ(r.attempts.size(), 3u);
  EXPECT_GE(Gap(r, 1), 0.75 * 125 - 5);
  EXPECT_GE(Gap(r, 2), 0.75 * 250 - 5);
  EXPECT_LT(Gap(r, 1) + Gap(r, 2), 3000);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_EQ(r.attempts[0].bound, "requests");
}

TEST(EngineProfiles, SdkRetriesOverloads529And503) {
  // 529 with retry-after 1 s (the server's clock: 1 s real), then 503 without a hint
  // (backoff n = 1: 1 s paper * (1 - 0.25 u) = 188-250 ms real), then OK.
  ScriptedUpstream up({Scripted(529, {{"retry-after", "1"}}, kOverloaded), Scripted(503, {}, "")});
  RunRecords r = RunOne("naive", up.url(), 4.0);
  ASSERT_EQ(r.attempts.size(), 3u);
  EXPECT_EQ(r.attempts[0].status, 529);
  EXPECT_EQ(r.attempts[1].status, 503);
  EXPECT_GE(Gap(r, 1), 950);
  EXPECT_GE(Gap(r, 2), 0.75 * 250 - 5);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_EQ(r.activities[0].executions, 1);  // all in place, slot held
}

TEST(EngineProfiles, SdkDoesNotRetryWhenTheServerSaysSo) {
  // x-should-retry: false -> the SDK gives up at once; the activity retry
  // policy (1 s paper, 100 ms at speedup 10) runs it again.
  ScriptedUpstream up({Scripted(429, {{"x-should-retry", "false"}, {"retry-after-ms", "50"}}, "")});
  RunRecords r = RunOne("naive", up.url(), 10.0);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.activities[0].executions, 2);
  EXPECT_TRUE(r.activities[0].ok);
}

TEST(EngineProfiles, BpDefersABare429ByTheWaitInItsMessage) {
  bp::test::ValkeyServer valkey;
  ASSERT_TRUE(valkey.running()) << valkey.error();
  ScriptedUpstream up({Scripted(
      429, {},
      R"({"error":{"message":"Limit 60, Used 60. Please try again in 300ms.","type":"requests"}})")});
  RunRecords r = RunOne("bp", up.url(), 1.0, valkey.url());
  ASSERT_EQ(r.slots_held.size(), 2u);
  EXPECT_EQ(r.activities[0].throttle_defers, 1);
  EXPECT_GE(Ms(r.slots_held[1].acquire_us - r.slots_held[0].release_us), 280);
  EXPECT_LT(Ms(r.slots_held[1].acquire_us - r.slots_held[0].release_us), 900);  // not 1 s
  EXPECT_TRUE(r.activities[0].ok);
}

TEST(EngineProfiles, BpDefersOverloadsAndFailsWhatCanNeverPass) {
  bp::test::ValkeyServer valkey;
  ASSERT_TRUE(valkey.running()) << valkey.error();
  {
    // 529 without a hint: backoff 1 s paper = 250 ms real at speedup 4, slot free.
    ScriptedUpstream up({Scripted(529, {}, kOverloaded)});
    RunRecords r = RunOne("bp", up.url(), 4.0, valkey.url());
    ASSERT_EQ(r.slots_held.size(), 2u);
    EXPECT_EQ(r.activities[0].throttle_defers, 1);
    EXPECT_GE(Ms(r.slots_held[1].acquire_us - r.slots_held[0].release_us), 240);
    EXPECT_TRUE(r.activities[0].ok);
  }
  {
    ScriptedUpstream up({Scripted(429, {{"x-should-retry", "false"}}, "")});
    RunRecords r = RunOne("bp", up.url(), 4.0, valkey.url());
    EXPECT_FALSE(r.activities[0].ok);
    EXPECT_EQ(r.activities[0].executions, 1);
    EXPECT_EQ(up.requests(), 1);
  }
}

TEST(EngineProfiles, UsageIsReadInEitherProvidersNames) {
  // Anthropic's usage names (input/output tokens) reach the records as OpenAI's do.
  ScriptedUpstream up(
      {Scripted(200, {}, R"({"type":"message","usage":{"input_tokens":11,"output_tokens":7}})")});
  RunRecords r = RunOne("naive", up.url(), 1.0);
  ASSERT_EQ(r.activities.size(), 1u);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_EQ(r.activities[0].completion_tokens, 7);
  ScriptedUpstream openai({});  // the scripted default: prompt 10, completion 20
  r = RunOne("naive", openai.url(), 1.0);
  EXPECT_EQ(r.activities[0].completion_tokens, 20);
}

}  // namespace
}  // namespace bp::loadgen
