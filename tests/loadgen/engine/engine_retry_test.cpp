// Each configuration's retry timing and slot accounting against a scripted
// upstream (engine_scripted_upstream.h). Timings are checked as lower bounds
// with generous upper bounds, so they hold on a loaded machine.
#include <gtest/gtest.h>

#include <algorithm>

#include "bp/loadgen/runner.h"
#include "engine_scripted_upstream.h"
#include "support/valkey_server.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

using bp::test::ScriptedAnswer;
using bp::test::ScriptedUpstream;

// One tenant, no dispatch latency; caps from `rps` (limit per window_s).
Workload TestWorkload(int concurrency, int workflows, int slots, int64_t limit = 60,
                      double window_s = 1.0) {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("engine-test");
  doc["slots"] = slots;
  doc["run_length_cap_s"] = 600;
  doc["tenants"][0]["concurrency"] = concurrency;
  doc["tenants"][0]["workflows"] = workflows;
  doc["upstream"]["limits"][0]["limit"] = limit;
  doc["upstream"]["limits"][0]["window_s"] = window_s;
  return testing::BuildWorkload(doc);
}

RunRecords RunConfig(const Workload& w, const std::string& config, const std::string& url,
                     double speedup, const std::string& valkey = "redis://127.0.0.1:1") {
  RunOptions o;
  o.configuration = config;
  o.speedup = speedup;
  o.upstream_url = url;
  o.valkey_url = valkey;
  o.configure_upstream = false;  // the scripted upstream has no admin API
  // A loaded test box can hold a gate call past the default 100 ms: it
  // would fail open (bp's runs here assert none do).
  o.gate_command_timeout_ms = 2000;
  auto r = RunOnce(w, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : RunRecords{};
}

double Ms(int64_t us) { return static_cast<double>(us) / 1000.0; }

TEST(EngineRetry, NaiveSdkRetryHoldsTheSlotAndHonoursRetryAfterMs) {
  ScriptedUpstream up({ScriptedAnswer::Throttle(300)});
  RunRecords r = RunConfig(TestWorkload(1, 1, 1), "naive", up.url(), 1.0);
  ASSERT_EQ(r.activities.size(), 1u);
  const ActivityRecord& a = r.activities[0];
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.executions, 1);
  EXPECT_EQ(a.http_attempts, 2);
  ASSERT_EQ(r.attempts.size(), 2u);
  double gap = Ms(r.attempts[1].send_us - r.attempts[0].done_us);
  EXPECT_GE(gap, 280);  // waited retry-after-ms 300 in place
  EXPECT_LT(gap, 3000);
  ASSERT_EQ(r.slots_held.size(), 1u);  // one slot interval spans both attempts
  EXPECT_LE(r.slots_held[0].acquire_us, r.attempts[0].send_us);
  EXPECT_GE(r.slots_held[0].release_us, r.attempts[1].done_us);
  EXPECT_EQ(r.attempts[0].bound, "requests");
}

TEST(EngineRetry, NaiveSdkGivesUpThenActivityRetryFreesTheSlot) {
  // 3 attempts (max_retries 2) all throttled, then the activity retry policy:
  // 1 s paper = 500 ms real at speedup 2, slot free meanwhile.
  ScriptedUpstream up(
      {ScriptedAnswer::Throttle(50), ScriptedAnswer::Throttle(50), ScriptedAnswer::Throttle(50)});
  RunRecords r = RunConfig(TestWorkload(1, 1, 1), "naive", up.url(), 2.0);
  ASSERT_EQ(r.activities.size(), 1u);
  EXPECT_TRUE(r.activities[0].ok);
  EXPECT_EQ(r.activities[0].executions, 2);
  EXPECT_EQ(r.activities[0].http_attempts, 4);
  ASSERT_EQ(r.slots_held.size(), 2u);
  double free_gap = Ms(r.slots_held[1].acquire_us - r.slots_held[0].release_us);
  EXPECT_GE(free_gap, 450);
  EXPECT_LT(free_gap, 5000);
  // The first execution held its slot through both in-place waits (2 x 50 ms).
  EXPECT_GE(Ms(r.slots_held[0].release_us - r.slots_held[0].acquire_us), 90);
}

TEST(EngineRetry, NaiveSdkBacksOffExponentiallyWithoutHint) {
  // No retry-after: 0.5 s then 1 s paper, times (1 - 0.25 u); speedup 4.
  ScriptedUpstream up({ScriptedAnswer::Throttle(-1), ScriptedAnswer::Throttle(-1)});
  RunRecords r = RunConfig(TestWorkload(1, 1, 1), "naive", up.url(), 4.0);
  ASSERT_EQ(r.attempts.size(), 3u);
  double g1 = Ms(r.attempts[1].send_us - r.attempts[0].done_us);
  double g2 = Ms(r.attempts[2].send_us - r.attempts[1].done_us);
  EXPECT_GE(g1, 0.75 * 125 - 5);
  EXPECT_GE(g2, 0.75 * 250 - 5);
  EXPECT_LT(g1, 2000);
  EXPECT_LT(g2, 2000);
}

TEST(EngineRetry, TnPacesDispatchAtTheQueueRpsLimit) {
  // queue-rps-limit 5/s with 1 s of burst: 5 at once, then one per 200 ms.
  ScriptedUpstream up({});
  RunRecords r = RunConfig(TestWorkload(10, 10, 10, 5, 1.0), "tn", up.url(), 1.0);
  std::vector<int64_t> sends;
  for (const auto& a : r.attempts) sends.push_back(a.send_us);
  ASSERT_EQ(sends.size(), 10u);
  std::sort(sends.begin(), sends.end());
  EXPECT_LT(Ms(sends[4] - sends[0]), 150);  // the burst
  EXPECT_GE(Ms(sends[9] - sends[0]), 900);  // 5 more at 5/s
  EXPECT_LT(Ms(sends[9] - sends[0]), 4000);
}

TEST(EngineRetry, LitellmLocal429WaitsSixtySecondsWithTheSlotHeld) {
  // Slice: 3 requests per 60 s window (cap 3 per 60 s). Speedup 60: the
  // window and the proxy's retry-after 60 s are 1 s real.
  ScriptedUpstream up({});
  RunRecords r = RunConfig(TestWorkload(4, 4, 4, 3, 60.0), "litellm", up.url(), 60.0);
  ASSERT_EQ(r.activities.size(), 4u);
  int local = 0;
  int64_t local_activity = -1, local_at = 0;
  for (const auto& a : r.attempts) {
    if (a.proxy_local) {
      ++local;
      local_activity = a.activity_id;
      local_at = a.done_us;
      EXPECT_EQ(a.status, 429);
      EXPECT_EQ(a.bound, "requests");
    }
  }
  ASSERT_EQ(local, 1);
  const ActivityRecord& a = r.activities[local_activity];
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.executions, 1);     // the SDK waited in place
  EXPECT_EQ(a.http_attempts, 1);  // proxy-local answers are not upstream attempts
  EXPECT_GE(Ms(a.final_answer_us - local_at), 900);
  EXPECT_GE(Ms(a.slot_held_us), 900);
  EXPECT_EQ(up.requests(), 4);
}

TEST(EngineRetry, LitellmRouterRetriesUpstream429InsideTheRequest) {
  ScriptedUpstream up({ScriptedAnswer::Throttle(100)});
  RunRecords r = RunConfig(TestWorkload(1, 1, 1), "litellm", up.url(), 1.0);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_FALSE(r.attempts[0].proxy_local);
  EXPECT_EQ(r.activities[0].executions, 1);
  EXPECT_GE(Ms(r.attempts[1].send_us - r.attempts[0].done_us), 90);
  EXPECT_EQ(r.slots_held.size(), 1u);
}

TEST(EngineRetry, Bp429IsDeferredOnADurableTimerNotRetriedInPlace) {
  bp::test::ValkeyServer valkey;
  ASSERT_TRUE(valkey.running()) << valkey.error();
  ScriptedUpstream up({ScriptedAnswer::Throttle(300)});
  RunRecords r = RunConfig(TestWorkload(1, 1, 1), "bp", up.url(), 1.0, valkey.url());
  ASSERT_EQ(r.activities.size(), 1u);
  const ActivityRecord& a = r.activities[0];
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.executions, 2);
  EXPECT_EQ(a.throttle_defers, 1);
  EXPECT_EQ(a.deferrals, 0);  // the gate admitted both times
  ASSERT_EQ(r.slots_held.size(), 2u);
  // The first execution let its slot go right after the 429 ...
  EXPECT_LT(Ms(r.slots_held[0].release_us - r.attempts[0].done_us), 100);
  // ... and the durable timer waited the retry-after with no slot.
  EXPECT_GE(Ms(r.slots_held[1].acquire_us - r.slots_held[0].release_us), 280);
  EXPECT_EQ(r.gate_fail_opens, 0u);
  // The timer is recorded with its cause and length (retry-after 300 ms).
  ASSERT_EQ(r.deferrals.size(), 1u);
  EXPECT_EQ(r.deferrals[0].cause, "429");
  EXPECT_EQ(r.deferrals[0].at_us, r.slots_held[0].release_us);
  EXPECT_GE(Ms(r.deferrals[0].delay_us), 300);
}

TEST(EngineRetry, BpRejectFailsTheActivityWithItsCause) {
  // The upstream serves at most 5 tokens per window; the prompts carry 10, so
  // the gate (max_cost_tokens 5 from the workload) REJECTs every call and
  // no request reaches the upstream.
  bp::test::ValkeyServer valkey;
  ASSERT_TRUE(valkey.running()) << valkey.error();
  ScriptedUpstream up({});
  Workload w = TestWorkload(1, 2, 1);
  nlohmann::json doc = w.upstream;
  doc["limits"].push_back(
      {{"dimension", "tokens"}, {"algorithm", "fixed_window"}, {"limit", 5}, {"window_s", 1.0}});
  w.upstream = doc;
  w.caps.tokens_per_s = 5;
  w.caps.max_tokens_per_call = 5;
  RunRecords r = RunConfig(w, "bp", up.url(), 1.0, valkey.url());
  ASSERT_EQ(r.activities.size(), 2u);
  for (const ActivityRecord& a : r.activities) {
    EXPECT_FALSE(a.ok);
    EXPECT_EQ(a.fail_cause, "gate_reject");
    EXPECT_GE(a.completed_us, 0);
  }
  EXPECT_EQ(up.requests(), 0);
  EXPECT_EQ(r.tenants[0].finish_us, r.activities[1].completed_us);
}

TEST(EngineRetry, BpDeferredActivityHoldsNoSlotWhileWaiting) {
  // Cap 2 req/s with 1 s of burst, 6 activities at once: the gate defers
  // most of them; each waits on a durable timer with its slot free.
  bp::test::ValkeyServer valkey;
  ASSERT_TRUE(valkey.running()) << valkey.error();
  ScriptedUpstream up({});
  RunRecords r = RunConfig(TestWorkload(6, 6, 6, 2, 1.0), "bp", up.url(), 1.0, valkey.url());
  ASSERT_EQ(r.activities.size(), 6u);
  int deferred = 0;
  for (const auto& a : r.activities) {
    EXPECT_TRUE(a.ok);
    if (a.deferrals == 0) continue;
    ++deferred;
    int64_t span = a.completed_us - a.scheduled_us;
    EXPECT_GE(Ms(span), 300);             // it waited ...
    EXPECT_LT(a.slot_held_us * 2, span);  // ... mostly without a slot
  }
  EXPECT_GE(deferred, 2);
  for (const auto& s : r.slots_held) EXPECT_LT(Ms(s.release_us - s.acquire_us), 500);
  // Each DEFER is recorded with the gate's binding rule.
  int64_t total = 0;
  for (const auto& a : r.activities) total += a.deferrals;
  ASSERT_EQ(static_cast<int64_t>(r.deferrals.size()), total);
  for (const auto& d : r.deferrals) {
    EXPECT_TRUE(d.cause == "fair" || d.cause == "l1:requests" || d.cause == "l1:tokens") << d.cause;
    EXPECT_GT(d.delay_us, 0);
  }
}

}  // namespace
}  // namespace bp::loadgen
