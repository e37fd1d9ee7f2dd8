// Service as a pure function request -> response on a FakeClock: exact
// rate-limit headers, 429 bodies per dialect, cost accounting, admin
// updates (malformed input: service_input_test.cpp). No sockets.
#include "bp/mockapi/service.h"

#include <gtest/gtest.h>

#include "bp/token_estimate.h"
#include "service_fixture.h"

namespace bp::mockapi {
namespace {

using namespace bp::mockapi::testing;  // NOLINT(build/namespaces): the fixture
using nlohmann::json;

TEST_F(ServiceTest, OpenAI429ExactlyAfterTheCap) {
  MockConfig c;
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 3, 60)};
  Start(c);
  for (int i = 0; i < 3; ++i) {
    HttpResponse r = Post("/v1/chat/completions", Chat(10));
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(Header(r, "x-ratelimit-remaining-requests"), std::to_string(2 - i));  // 3 -> 0
  }
  HttpResponse r = Post("/v1/chat/completions", Chat(10));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(Header(r, "retry-after-ms"), "19750");  // until 1020 s
  EXPECT_EQ(Header(r, "retry-after"), "20");
  EXPECT_EQ(Header(r, "x-ratelimit-limit-requests"), "3");
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-requests"), "0");
  EXPECT_EQ(Header(r, "x-ratelimit-reset-requests"), "19.75s");
  EXPECT_EQ(Header(r, "x-mockapi-bound"), "requests");
  const json body = json::parse(r.body);
  EXPECT_EQ(body["error"]["type"], "requests");
  EXPECT_EQ(body["error"]["code"], "rate_limit_exceeded");
  EXPECT_EQ(
      body["error"]["message"],
      "Rate limit reached for gpt-4o-mini in organization org-mock on requests per min (RPM): "
      "Limit 3, Used 3, Requested 1. Please try again in 19.75s.");
  clock_.SetUs(1020 * kS);  // next window: 0 -> 3
  EXPECT_EQ(Post("/v1/chat/completions", Chat(10)).status, 200);
}

TEST_F(ServiceTest, TokensBindWithUsedAndRequested) {
  MockConfig c;  // completion fixed 20: each call costs 100 + 20 tokens
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 60, 1),
              Limit(Dimension::kTokens, LimiterAlgorithm::kFixedWindow, 250, 1)};
  Start(c);
  HttpResponse r = Post("/v1/chat/completions", Chat(100));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-tokens"), "130");
  EXPECT_EQ(json::parse(r.body)["usage"],
            json({{"prompt_tokens", 100}, {"completion_tokens", 20}, {"total_tokens", 120}}));
  ASSERT_EQ(Post("/v1/chat/completions", Chat(100)).status, 200);  // 130 -> 10
  r = Post("/v1/chat/completions", Chat(100));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(Header(r, "retry-after-ms"), "750");
  EXPECT_EQ(Header(r, "retry-after"), "1");
  EXPECT_EQ(Header(r, "x-mockapi-bound"), "tokens");
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-requests"), "58");  // the 429 consumed nothing
  const json body = json::parse(r.body);
  EXPECT_EQ(body["error"]["type"], "tokens");
  EXPECT_EQ(body["error"]["message"],
            "Rate limit reached for gpt-4o-mini in organization org-mock on tokens per sec (TPS): "
            "Limit 250, Used 240, Requested 120. Please try again in 750ms.");
}

TEST_F(ServiceTest, CountRejectedChargesTheRequest) {
  MockConfig c;
  c.count_rejected = true;
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 10, 60),
              Limit(Dimension::kTokens, LimiterAlgorithm::kFixedWindow, 200, 60)};
  Start(c);
  ASSERT_EQ(Post("/v1/chat/completions", Chat(100)).status, 200);
  HttpResponse r = Post("/v1/chat/completions", Chat(100));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-requests"), "8");  // 10 -> 9 -> 8
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-tokens"), "80");
}

TEST_F(ServiceTest, RequestTooLargeNeverFits) {
  MockConfig c;
  c.limits = {Limit(Dimension::kTokens, LimiterAlgorithm::kFixedWindow, 12000, 1)};
  Start(c);
  HttpResponse r = Post("/v1/chat/completions", Chat(12000));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(Header(r, "x-should-retry"), "false");
  EXPECT_EQ(Header(r, "retry-after-ms"), "<absent>");
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-tokens"), "12000");
  EXPECT_EQ(json::parse(r.body)["error"]["message"],
            "Request too large for gpt-4o-mini in organization org-mock on tokens per sec (TPS): "
            "Limit 12000, Requested 12020. The input or output tokens must be reduced in order to "
            "run successfully.");
}

TEST_F(ServiceTest, AnthropicHeadersAndBody) {
  MockConfig c;  // /v1/messages speaks Anthropic whatever the dialect
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kTokenBucket, 2, 60)};
  Start(c);
  const std::string body =
      R"({"model":"claude-x","max_tokens":50,"system":"sys!","messages":[{"role":"user","content":[{"type":"text","text":"abcdefgh"}]}]})";
  HttpResponse r = Post("/v1/messages", body);
  ASSERT_EQ(r.status, 200);
  const json ok = json::parse(r.body);
  EXPECT_EQ(ok["type"], "message");
  EXPECT_EQ(ok["usage"], json({{"input_tokens", 3}, {"output_tokens", 20}}));  // 12 bytes -> 3
  EXPECT_EQ(Header(r, "anthropic-ratelimit-requests-remaining"), "1");
  EXPECT_EQ(Header(r, "anthropic-ratelimit-requests-reset"), "1970-01-01T00:17:10.250Z");  // +30 s
  ASSERT_EQ(Post("/v1/messages", body).status, 200);
  r = Post("/v1/messages", body);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(Header(r, "retry-after-ms"), "30000");  // one request per 30 s
  EXPECT_EQ(Header(r, "retry-after"), "30");
  EXPECT_EQ(Header(r, "anthropic-ratelimit-requests-reset"), "1970-01-01T00:17:40.250Z");  // +60 s
  const json err = json::parse(r.body);
  EXPECT_EQ(err["type"], "error");
  EXPECT_EQ(err["error"]["type"], "rate_limit_error");
  EXPECT_EQ(err["error"]["dimension"], "requests");
  EXPECT_EQ(err["request_id"].get<std::string>().substr(0, 8), "req_mock");
}

TEST_F(ServiceTest, AzureBody) {
  MockConfig c;
  c.dialect = Dialect::kAzure;
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kQuantized, 600, 60)};  // 10 per s
  Start(c);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(Post("/v1/chat/completions", Chat(1)).status, 200);
  HttpResponse r = Post("/v1/chat/completions", Chat(1));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(Header(r, "retry-after-ms"), "750");
  EXPECT_EQ(Header(r, "x-ratelimit-limit-requests"), "600");
  const json err = json::parse(r.body);
  EXPECT_EQ(err["error"]["code"], "429");
  EXPECT_NE(err["error"]["message"].get<std::string>().find("exceeded call rate limit"),
            std::string::npos);
  EXPECT_NE(err["error"]["message"].get<std::string>().find("Please retry after 1 seconds."),
            std::string::npos);
}

TEST_F(ServiceTest, MaxTokensAccountingAndClamp) {
  MockConfig c;
  c.token_accounting = TokenAccounting::kMaxTokens;
  c.limits = {Limit(Dimension::kTokens, LimiterAlgorithm::kFixedWindow, 1000, 60)};
  Start(c);
  HttpResponse r = Post("/v1/chat/completions", Chat(100, R"(,"max_tokens":50)"));
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-tokens"), "850");  // 100 + max_tokens 50
  r = Post("/v1/chat/completions", Chat(100, R"(,"max_completion_tokens":7)"));
  const json body = json::parse(r.body);
  EXPECT_EQ(body["usage"]["completion_tokens"], 7);  // 20 clamped to 7
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-tokens"), "743");
}

TEST_F(ServiceTest, ApiKeyScopeSeparatesBudgets) {
  MockConfig c;
  c.scope = Scope::kApiKey;
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 1, 60)};
  Start(c);
  EXPECT_EQ(Post("/v1/chat/completions", Chat(1), "Bearer a").status, 200);
  EXPECT_EQ(Post("/v1/chat/completions", Chat(1), "Bearer a").status, 429);
  EXPECT_EQ(Post("/v1/chat/completions", Chat(1), "Bearer b").status, 200);
}

TEST_F(ServiceTest, StreamWithUsage) {
  Start(MockConfig{});
  HttpResponse r = Post("/v1/chat/completions",
                        Chat(5, R"(,"stream":true,"stream_options":{"include_usage":true})"));
  ASSERT_EQ(r.status, 200);
  EXPECT_STREQ(r.content_type, "text/event-stream");
  std::vector<std::string> events;
  for (size_t at = 0; (at = r.body.find("data: ", at)) != std::string::npos; at += 6) {
    events.push_back(r.body.substr(at + 6, r.body.find("\n\n", at) - at - 6));
  }
  ASSERT_EQ(events.size(), 24u);  // role + 20 content + finish + usage + [DONE]
  EXPECT_EQ(events.back(), "[DONE]");
  const json usage = json::parse(events[22]);
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["total_tokens"], 25);
  EXPECT_EQ(json::parse(events[21])["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(json::parse(events[1])["choices"][0]["delta"]["content"], "tok ");
}

TEST_F(ServiceTest, LatencyIsADelayNotASleep) {
  MockConfig c;
  auto s = Service::Create(c, clock_);
  c.latency = {10, 10, 2};  // 10 ms + 2 ms x 20 completion tokens
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->UpdateConfig(ConfigToJson(c)).ok());
  const std::string body = Chat(3);
  HttpRequest req{"POST", "/v1/chat/completions", "", "", body};
  EXPECT_EQ((*s)->Handle(req).delay_us, 50'000);
}

TEST_F(ServiceTest, PacedStreamSpendsTheTokenTimeBetweenEvents) {
  MockConfig c;
  auto s = Service::Create(c, clock_);
  ASSERT_TRUE(s.ok());
  c.latency = {10, 10, 2};  // first event after 10 ms, then 2 ms x 20 tokens over 24 events
  ASSERT_TRUE((*s)->UpdateConfig(ConfigToJson(c)).ok());
  const std::string body = Chat(3, R"(,"stream":true,"stream_options":{"include_usage":true})");
  HttpResponse r = (*s)->Handle(HttpRequest{"POST", "/v1/chat/completions", "", "", body});
  EXPECT_EQ(r.delay_us, 10'000);
  EXPECT_EQ(r.stream_interval_us, 40'000 / 24);
}

TEST_F(ServiceTest, AdminPutTakesEffectOnTheNextCall) {
  MockConfig c;
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 5, 60)};
  Start(c);
  ASSERT_EQ(Post("/v1/chat/completions", Chat(1)).status, 200);  // 5 -> 4
  // A PUT without `limits` keeps the limiter state.
  HttpResponse r = Call("PUT", "/admin/config", R"({"model":"other-model"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["model"], "other-model");
  EXPECT_EQ(Header(Post("/v1/chat/completions", Chat(1)), "x-ratelimit-remaining-requests"), "3");
  // `limits` replaces the limits and resets their state.
  r = Call(
      "PUT", "/admin/config",
      R"({"limits":[{"dimension":"requests","algorithm":"fixed_window","limit":1,"window_s":60}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Post("/v1/chat/completions", Chat(1)).status, 200);
  EXPECT_EQ(Post("/v1/chat/completions", Chat(1)).status, 429);
  // A bad PUT answers 400 with the message and changes nothing.
  const std::string before = Call("GET", "/admin/config").body;
  for (const char* bad :
       {R"({"limits":[{"dimension":"rpm","algorithm":"fixed_window","limit":1,"window_s":60}]})",
        R"({"model":"x","latency":{"min_ms":-1}})", R"({"threads":7})", "not json",
        R"({"colour":"blue"})"}) {
    r = Call("PUT", "/admin/config", bad);
    EXPECT_EQ(r.status, 400) << bad;
  }
  EXPECT_EQ(
      json::parse(Call("PUT", "/admin/config", R"({"colour":"blue"})").body)["error"]["message"],
      "colour: unknown field");
  EXPECT_EQ(
      json::parse(Call("PUT", "/admin/config", R"({"limits":[{"dimension":"rpm"}]})")
                      .body)["error"]["message"],
      "limits[0]: dimension must be requests, tokens, input_tokens or output_tokens, got \"rpm\"");
  EXPECT_EQ(Call("GET", "/admin/config").body, before);
  EXPECT_EQ(Post("/v1/chat/completions", Chat(1)).status, 429);  // state kept
}

TEST_F(ServiceTest, StatsAndMetricsCountByStatusAndBound) {
  MockConfig c;
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 1, 60)};
  Start(c);
  Post("/v1/chat/completions", Chat(8));
  Post("/v1/chat/completions", Chat(8));
  Post("/v1/chat/completions", "{");
  const json stats = json::parse(Call("GET", "/stats").body);
  EXPECT_EQ(stats["responses"]["200"], 1);
  EXPECT_EQ(stats["responses"]["429"], 1);
  EXPECT_EQ(stats["responses"]["400"], 1);
  EXPECT_EQ(stats["rate_limited"]["requests"], 1);
  EXPECT_EQ(stats["prompt_tokens"], 8);
  EXPECT_EQ(stats["limits"][0]["remaining"], 0);
  const std::string metrics = Call("GET", "/metrics").body;
  EXPECT_NE(metrics.find("mockapi_responses_total{status=\"429\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("mockapi_rate_limited_total{dimension=\"requests\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(Call("GET", "/healthz").body, "ok\n");
  EXPECT_EQ(json::parse(Call("GET", "/v1/models").body)["data"][0]["id"], "gpt-4o-mini");
}

}  // namespace
}  // namespace bp::mockapi
