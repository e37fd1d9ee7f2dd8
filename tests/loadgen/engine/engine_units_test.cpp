// Exact tests of the engine's pure parts: retry rules (docs/providers.md),
// the Temporal task queue, the LiteLLM limiter, workload parsing.
#include <gtest/gtest.h>

#include <filesystem>

#include "bp/loadgen/http_client.h"
#include "bp/loadgen/litellm_limiter.h"
#include "bp/loadgen/retry_policy.h"
#include "bp/loadgen/task_queue.h"
#include "bp/loadgen/workload.h"

namespace bp::loadgen {
namespace {

TEST(EngineRetryPolicy, SdkHonoursHintWithinSixtySeconds) {
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs({644.0}, 0, 0.9), 644.0);
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs({60000.0}, 1, 0.9), 60000.0);
  // 0 and > 60 s fall back to min(0.5 s * 2^n, 8 s) * (1 - 0.25 u).
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs({0.0}, 0, 0.0), 500.0);
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs({60001.0}, 1, 0.0), 1000.0);
  // openai-node <= 6.25 honours only t < 60 s: LiteLLM's 60 s falls back.
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs({60000.0}, 1, 0.0, SdkRetryAfterBound::kExclusive60s), 1000.0);
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs({59999.0}, 1, 0.0, SdkRetryAfterBound::kExclusive60s), 59999.0);
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs({}, 1, 1.0), 750.0);   // 1000 * 0.75
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs({}, 5, 0.0), 8000.0);  // 16 s capped at 8 s
  EXPECT_TRUE(SdkRetryable(429));
  EXPECT_TRUE(SdkRetryable(0));
  EXPECT_TRUE(SdkRetryable(503));
  EXPECT_TRUE(SdkRetryable(408));
  EXPECT_FALSE(SdkRetryable(400));
  EXPECT_EQ(kSdkMaxRetries, 2);
}

TEST(EngineRetryPolicy, TemporalActivityRetryDoublesToHundredSeconds) {
  EXPECT_DOUBLE_EQ(ActivityRetryDelayMs(1), 1000.0);
  EXPECT_DOUBLE_EQ(ActivityRetryDelayMs(2), 2000.0);
  EXPECT_DOUBLE_EQ(ActivityRetryDelayMs(7), 64000.0);
  EXPECT_DOUBLE_EQ(ActivityRetryDelayMs(8), 100000.0);  // 128 s capped at 100 x initial
  EXPECT_DOUBLE_EQ(ActivityRetryDelayMs(1000), 100000.0);
}

TEST(EngineRetryPolicy, LitellmRouterDelay) {
  EXPECT_DOUBLE_EQ(LitellmRouterDelayMs({0.0}, 0, 0.5), 0.0);  // 0 s is honoured
  EXPECT_DOUBLE_EQ(LitellmRouterDelayMs({250.0}, 1, 0.5), 250.0);
  EXPECT_DOUBLE_EQ(LitellmRouterDelayMs({}, 0, 0.0), 500.0);
  EXPECT_DOUBLE_EQ(LitellmRouterDelayMs({61000.0}, 1, 0.0), 1000.0);
}

TEST(EngineRetryPolicy, ParseSeconds) {
  EXPECT_EQ(ParseSeconds("1"), 1.0);
  EXPECT_EQ(ParseSeconds(" 0.25 "), 0.25);
  EXPECT_FALSE(ParseSeconds("Wed, 21 Oct 2015 07:28:00 GMT").has_value());
  EXPECT_FALSE(ParseSeconds("").has_value());
  EXPECT_EQ(ParseSeconds("\t16\t"), 16.0);
  EXPECT_EQ(ParseSeconds("0"), 0.0);
  // Not a non-negative decimal number: ignored as absent (strtod read these).
  for (const char* v : {"0x10", "-1", "+1", "1e3", "inf", "nan", "16abc", "1.2.3", ".", "1 6"}) {
    EXPECT_FALSE(ParseSeconds(v).has_value()) << v;
  }
}

TEST(EngineHttpUrl, PortIsStrictDecimal) {
  auto ok = ParseHttpUrl("http://127.0.0.1:8080/");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->host, "127.0.0.1");
  EXPECT_EQ(ok->port, 8080);
  EXPECT_EQ(ParseHttpUrl("[::1]:65535")->port, 65535);
  // strtod read "0x1F90" as 8080 and "8080.0" as 8080: now both are errors.
  for (const char* port :
       {"0x1F90", "8080.0", "8e3", "+8080", " 8080", "8080x", "0", "65536", ""}) {
    auto bad = ParseHttpUrl(std::string("http://127.0.0.1:") + port);
    EXPECT_EQ(bad.status().message(), std::string("http://127.0.0.1:") + port + ": bad port '" +
                                          port + "' (decimal 1-65535)")
        << port;
  }
}

TEST(EngineRetryPolicy, HexRetryAfterIsAbsentNotSixteenSeconds) {
  // A 429 carrying retry-after: 0x10 gets the SDK's backoff, not 16 s.
  RetryHint hint;
  if (auto s = ParseSeconds("0x10")) hint.retry_after_ms = *s * 1000;
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs(hint, 0, 0.0), 500.0);
  if (auto s = ParseSeconds("16")) hint.retry_after_ms = *s * 1000;
  EXPECT_DOUBLE_EQ(SdkRetryDelayMs(hint, 0, 0.0), 16000.0);
}

TEST(EngineTaskQueue, TemporalBucketPacesDispatch) {
  TemporalTaskQueue q({/*rate_per_s=*/10, /*burst=*/2});
  for (int i = 0; i < 4; ++i) q.Push({i, 0, 1, 1.0}, 0);
  EXPECT_TRUE(q.Pop(0).has_value());  // 2 -> 1 tokens
  EXPECT_TRUE(q.Pop(0).has_value());  // 1 -> 0
  EXPECT_FALSE(q.Pop(0).has_value());
  EXPECT_EQ(q.NextReadyUs(0), 100000);  // one token at 10/s
  EXPECT_FALSE(q.Pop(99999).has_value());
  EXPECT_TRUE(q.Pop(100000).has_value());
  EXPECT_EQ(q.size(), 1u);
}

TEST(EngineTaskQueue, TemporalPriorityStrictFairnessWeighted) {
  TemporalTaskQueue q({1e9, 1e9});
  // Tenant 0 (weight 2) and 1 (weight 1) at priority 2; tenant 2 at priority 1.
  for (int i = 0; i < 6; ++i) q.Push({i, 0, 2, 2.0}, 0);
  for (int i = 10; i < 13; ++i) q.Push({i, 1, 2, 1.0}, 0);
  q.Push({100, 2, 1, 1.0}, 0);
  EXPECT_EQ(q.Pop(0)->activity_id, 100);  // priority 1 first
  std::string order;
  for (int i = 0; i < 6; ++i) order += std::to_string(q.Pop(0)->tenant_index);
  EXPECT_EQ(order, "010010");  // smooth WRR 2:1
}

TEST(EngineTaskQueue, FifoKeepsArrivalOrder) {
  FifoTaskQueue q;
  q.Push({3, 2, 3, 1}, 0);
  q.Push({1, 0, 1, 1}, 0);
  EXPECT_EQ(q.Pop(0)->activity_id, 3);
  EXPECT_EQ(q.Pop(0)->activity_id, 1);
  EXPECT_FALSE(q.Pop(0).has_value());
}

TEST(EngineLitellm, SlicesAreWeightProportionalAndSumToTheCap) {
  // Cross-priority: 2 tenants per class, omega 0.5/0.3/0.2, w_t = 1.
  auto s = LitellmSlices({1, 1, 1, 1, 1, 1}, {0.5, 0.5, 0.3, 0.3, 0.2, 0.2}, 60, 12000);
  EXPECT_DOUBLE_EQ(s[0].rpm_limit, 900);  // 0.25 * 3600
  EXPECT_DOUBLE_EQ(s[2].rpm_limit, 540);
  EXPECT_DOUBLE_EQ(s[4].rpm_limit, 360);
  EXPECT_DOUBLE_EQ(s[0].tpm_limit, 180000);
  double total = 0;
  for (auto& k : s) total += k.rpm_limit;
  EXPECT_DOUBLE_EQ(total, 3600);
}

TEST(EngineLitellm, WindowStartsAtFirstRequestAndRejectsBurnRpm) {
  LitellmLimiter lim({{2, 100}}, /*window_us=*/60'000'000);
  using V = LitellmLimiter::Verdict;
  EXPECT_EQ(lim.Check(0, 40, 5'000'000), V::kPass);     // window opens at 5 s
  EXPECT_EQ(lim.Check(0, 70, 6'000'000), V::kOverTpm);  // 40 + 70 > 100; rpm 2
  EXPECT_EQ(lim.Check(0, 10, 7'000'000), V::kOverRpm);  // the reject burned rpm
  EXPECT_DOUBLE_EQ(lim.rpm_used(0), 3);
  EXPECT_EQ(lim.Check(0, 10, 65'000'000), V::kPass);  // 60 s after 5 s: fresh window
  EXPECT_EQ(lim.window_start_us(0), 65'000'000);
  lim.Correct(0, 10, 30, 65'000'000, 66'000'000);  // reserved 10, used 30: 10 -> 30 tokens
  EXPECT_DOUBLE_EQ(lim.tpm_used(0), 30);
  lim.Correct(0, 10, 0, 5'000'000, 66'000'000);  // an expired window: ignored
  EXPECT_DOUBLE_EQ(lim.tpm_used(0), 30);
  // v3's 429 says retry-after: 60 (the window size) wherever in the window.
  EXPECT_EQ(lim.RetryAfterUs(0, 66'000'000), 60'000'000);
  EXPECT_EQ(lim.RetryAfterUs(0, 124'000'000), 60'000'000);
}

TEST(EngineLitellm, V1WindowsAreClockMinutesAndRejectsDoNotCount) {
  LitellmLimiter lim({{2, 100}}, /*window_us=*/60'000'000, LitellmLimiterVersion::kV1);
  using V = LitellmLimiter::Verdict;
  EXPECT_EQ(lim.Check(0, 999, 5'000'000), V::kPass);  // reserves nothing
  EXPECT_EQ(lim.window_start_us(0), 0);               // the clock minute [0, 60 s)
  EXPECT_DOUBLE_EQ(lim.tpm_used(0), 0);
  lim.Correct(0, 0, 100, 0, 6'000'000);  // usage counted after the response
  EXPECT_DOUBLE_EQ(lim.tpm_used(0), 100);
  EXPECT_EQ(lim.Check(0, 0, 7'000'000), V::kOverTpm);  // 100 >= 100
  EXPECT_DOUBLE_EQ(lim.rpm_used(0), 1);                // the reject did not count
  // 429 at 45 s: retry-after 15 s, to the next clock minute.
  EXPECT_EQ(lim.RetryAfterUs(0, 45'000'000), 15'000'000);
  EXPECT_EQ(lim.Check(0, 0, 60'000'000), V::kPass);  // next minute: fresh counters
  EXPECT_EQ(lim.window_start_us(0), 60'000'000);
  EXPECT_EQ(lim.Check(0, 0, 61'000'000), V::kPass);
  EXPECT_EQ(lim.Check(0, 0, 62'000'000), V::kOverRpm);  // 2 >= 2
  EXPECT_EQ(lim.Check(0, 0, 63'000'000), V::kOverRpm);
  EXPECT_DOUBLE_EQ(lim.rpm_used(0), 2);
  EXPECT_EQ(lim.RetryAfterUs(0, 63'500'000), 56'500'000);
}

TEST(EngineLitellm, ParsesLimiterAndTokenCount) {
  EXPECT_EQ(*ParseLitellmLimiter("v1"), LitellmLimiterVersion::kV1);
  EXPECT_EQ(*ParseLitellmLimiter("v3"), LitellmLimiterVersion::kV3);
  EXPECT_FALSE(ParseLitellmLimiter("v2").ok());
  EXPECT_EQ(*ParseLitellmTokenCount("total"), LitellmTokenCount::kTotal);
  EXPECT_EQ(*ParseLitellmTokenCount("output"), LitellmTokenCount::kOutput);
  EXPECT_FALSE(ParseLitellmTokenCount("input").ok());
}

nlohmann::json MinimalWorkload() {
  return {{"name", "t"},
          {"slots", 4},
          {"run_length_cap_s", 10},
          {"tenants",
           {{{"id", "a"},
             {"priority", 1},
             {"concurrency", 1},
             {"workflows", 1},
             {"prompt_tokens", 10},
             {"max_tokens", 5}}}},
          {"upstream",
           {{"limits",
             {{{"dimension", "requests"},
               {"algorithm", "fixed_window"},
               {"limit", 60},
               {"window_s", 1.0}}}}}}};
}

TEST(EngineWorkload, BadFieldsNameFileAndField) {
  auto doc = MinimalWorkload();
  doc["tenants"][0]["concurrency"] = 0;
  auto w = ParseWorkload(doc, "x.json");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "x.json: tenants[0].concurrency: must be an integer in [1, 100000], got 0");
  doc = MinimalWorkload();
  doc["tenants"][0]["priority"] = 4;  // only 3 classes (default omega)
  EXPECT_NE(ParseWorkload(doc, "x.json").status().message().find("tenants[0].priority"),
            std::string::npos);
  doc = MinimalWorkload();
  doc["slotz"] = 3;
  EXPECT_EQ(ParseWorkload(doc, "x.json").status().message(), "x.json: slotz: unknown field");
  doc = MinimalWorkload();
  doc["upstream"]["limits"][0]["dimension"] = "tokens";
  EXPECT_NE(ParseWorkload(doc, "x.json").status().message().find("needs a \"requests\" limit"),
            std::string::npos);
  for (const char* bad : {"../escape", "has space", "..", ""}) {
    doc = MinimalWorkload();
    doc["name"] = bad;  // a results folder and part of a gate target
    EXPECT_EQ(ParseWorkload(doc, "x.json").status().message(),
              "x.json: name: must match [A-Za-z0-9_.-]{1,128}")
        << bad;
  }
  EXPECT_EQ(LoadWorkload("/nonexistent.json").status().code(), StatusCode::kNotFound);
}

TEST(EngineWorkload, LargestCallPerDimensionIsTheLeastLimitCapacity) {
  auto doc = MinimalWorkload();
  doc["upstream"]["limits"].push_back(
      {{"dimension", "tokens"}, {"algorithm", "fixed_window"}, {"limit", 12000}, {"window_s", 1}});
  doc["upstream"]["limits"].push_back({{"dimension", "tokens"},
                                       {"algorithm", "quantized"},
                                       {"limit", 600000},
                                       {"window_s", 60},
                                       {"quantum_s", 0.5}});  // 5000 per quantum
  auto w = ParseWorkload(doc, "x.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_DOUBLE_EQ(w->caps.max_requests_per_call, 60);
  EXPECT_DOUBLE_EQ(w->caps.max_tokens_per_call, 5000);  // min(12000, 600000 * 0.5 / 60)
  EXPECT_DOUBLE_EQ(w->caps.tokens_per_s, 22000);
}

TEST(EngineWorkload, AllShippedWorkloadsParse) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(BP_SOURCE_DIR "/configs/workloads")) {
    if (e.path().extension() != ".json") continue;
    auto w = LoadWorkload(e.path().string());
    EXPECT_TRUE(w.ok()) << w.status().message();
    ++n;
  }
  // Table II's nine, mixed-sizes, the two asymmetric-class ones,
  // cross-priority-strict and the two streaming ones.
  EXPECT_EQ(n, 15);
  auto ms = LoadWorkload(BP_SOURCE_DIR "/configs/workloads/mixed-sizes.json");
  ASSERT_TRUE(ms.ok());
  EXPECT_DOUBLE_EQ(ms->caps.max_tokens_per_call, 12000);  // 6000-token prompts fit the window
  auto tb = LoadWorkload(BP_SOURCE_DIR "/configs/workloads/token-bound.json");
  ASSERT_TRUE(tb.ok());
  EXPECT_DOUBLE_EQ(tb->caps.tokens_per_s, 12000);
  EXPECT_EQ(tb->tenants.size(), 6u);
}

}  // namespace
}  // namespace bp::loadgen
