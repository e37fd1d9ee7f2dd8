// Provider profiles and overload answers (docs/provider-profiles.md) on the
// service as a function on a FakeClock: exact headers and bodies per profile,
// the overload share's exact spread, its config and flags.
#include <gtest/gtest.h>

#include "bp/mockapi/cli.h"
#include "bp/mockapi/service.h"
#include "bp/token_estimate.h"

namespace bp::mockapi {
namespace {

using nlohmann::json;
constexpr int64_t kS = 1'000'000;

bool Has(const HttpResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (name == n) return true;
  }
  return false;
}

std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (name == n) return v;
  }
  return "<absent>";
}

// Names of the headers that carry rate-limit or retry information.
std::vector<std::string> LimitHeaders(const HttpResponse& r) {
  std::vector<std::string> out;
  for (const auto& [n, v] : r.headers) {
    const std::string name = n;
    if (name.rfind("x-ratelimit-", 0) == 0 || name.rfind("anthropic-ratelimit-", 0) == 0 ||
        name.rfind("retry-after", 0) == 0 || name == "x-should-retry" || name == "x-mockapi-bound")
      out.push_back(name);
  }
  return out;
}

LimiterOptions Limit(Dimension d, int64_t limit, double window_s) {
  LimiterOptions o;
  o.dimension = d;
  o.algorithm = LimiterAlgorithm::kFixedWindow;
  o.limit = limit;
  o.window_s = window_s;
  return o;
}

std::string Chat(int64_t prompt_tokens) {
  return R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":")" +
         TextOfTokens(prompt_tokens) + "\"}]}";
}

class ProfileTest : public ::testing::Test {
 protected:
  // 3 requests and 1 000 tokens per minute; completion fixed at 20 tokens.
  void Start(Profile profile, OverloadOptions overload = {}, uint64_t seed = 1) {
    MockConfig c;
    c.profile = profile;
    c.overload = overload;
    c.seed = seed;
    c.latency = {0, 0, 0};
    c.limits = {Limit(Dimension::kRequests, 3, 60), Limit(Dimension::kTokens, 1000, 60)};
    auto s = Service::Create(c, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    service_ = std::move(*s);
  }
  HttpResponse Call(std::string_view method, std::string_view path, std::string_view body = "") {
    HttpRequest r;
    r.method = method;
    r.target = path;
    r.body = body;
    return service_->Handle(r);
  }
  HttpResponse Post(const std::string& body) { return Call("POST", "/v1/chat/completions", body); }

  FakeClock clock_{1000 * kS + 250'000};  // 19.75 s before the minute edge at 1020 s
  std::unique_ptr<Service> service_;
};

TEST_F(ProfileTest, AzureRemainingOnlyRetryAfterMsAndAzureBody) {
  Start(Profile::kAzure);
  HttpResponse r = Post(Chat(10));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(LimitHeaders(r), (std::vector<std::string>{"x-ratelimit-remaining-requests",
                                                       "x-ratelimit-remaining-tokens"}));
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-requests"), "2");
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-tokens"), "970");  // 10 prompt + 20 completion
  EXPECT_EQ(json::parse(r.body)["object"], "chat.completion");  // success body: the dialect's
  ASSERT_EQ(Post(Chat(10)).status, 200);
  ASSERT_EQ(Post(Chat(10)).status, 200);
  r = Post(Chat(10));
  ASSERT_EQ(r.status, 429);
  EXPECT_EQ(
      LimitHeaders(r),
      (std::vector<std::string>{"x-mockapi-bound", "retry-after", "retry-after-ms",
                                "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens"}));
  EXPECT_EQ(Header(r, "retry-after-ms"), "19750");
  EXPECT_EQ(Header(r, "retry-after"), "20");
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-requests"), "0");
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"error":{"code":"429","message":"Requests to the )"
                        R"(ChatCompletions_Create Operation under Azure OpenAI API version )"
                        R"(2024-10-21 have exceeded call rate limit of your current pricing tier )"
                        R"((3 requests per min (RPM)). Please retry after 20 seconds.",)"
                        R"("dimension":"requests"}})"));
}

TEST_F(ProfileTest, AnthropicHeadersRfc3339RetryAfterOnlyAndItsBody) {
  Start(Profile::kAnthropic);  // on the OpenAI path: the profile decides the reporting
  HttpResponse r = Post(Chat(10));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(LimitHeaders(r),
            (std::vector<std::string>{
                "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining",
                "anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-limit",
                "anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"}));
  EXPECT_EQ(Header(r, "anthropic-ratelimit-requests-remaining"), "2");
  EXPECT_EQ(Header(r, "anthropic-ratelimit-requests-reset"), "1970-01-01T00:17:00Z");  // 1020 s
  EXPECT_EQ(Header(r, "anthropic-ratelimit-tokens-remaining"), "970");
  ASSERT_EQ(Post(Chat(10)).status, 200);
  ASSERT_EQ(Post(Chat(10)).status, 200);
  clock_.AdvanceUs(250'000);  // 1000.5 s: 19.5 s to go
  r = Post(Chat(10));
  ASSERT_EQ(r.status, 429);
  EXPECT_EQ(Header(r, "retry-after"), "20");  // ceil(19.5)
  EXPECT_FALSE(Has(r, "retry-after-ms"));     // Anthropic documents retry-after only
  EXPECT_EQ(Header(r, "anthropic-ratelimit-requests-remaining"), "0");
  const json body = json::parse(r.body);
  EXPECT_EQ(body["type"], "error");
  EXPECT_EQ(body["error"],
            json({{"type", "rate_limit_error"},
                  {"message",
                   "This request would exceed your organization's rate limit of 3 requests per "
                   "min (RPM) (used 3, requested 1). Please try again in 19.5s."},
                  {"dimension", "requests"}}));
  EXPECT_EQ(body["request_id"], Header(r, "request-id"));
}

TEST_F(ProfileTest, BareHasNoRateLimitOrRetryHeadersTheWaitIsInTheMessage) {
  Start(Profile::kBare);
  HttpResponse r = Post(Chat(10));
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(LimitHeaders(r).empty());
  EXPECT_TRUE(Has(r, "x-request-id"));
  ASSERT_EQ(Post(Chat(10)).status, 200);
  ASSERT_EQ(Post(Chat(10)).status, 200);
  r = Post(Chat(10));
  ASSERT_EQ(r.status, 429);
  EXPECT_TRUE(LimitHeaders(r).empty());
  EXPECT_EQ(json::parse(r.body)["error"]["message"],
            "Rate limit reached for gpt-4o-mini in organization org-mock on requests per min "
            "(RPM): Limit 3, Used 3, Requested 1. Please try again in 19.75s.");
  // A call that can never fit: no x-should-retry either.
  clock_.SetUs(1020 * kS);
  r = Post(Chat(2000));
  ASSERT_EQ(r.status, 429);
  EXPECT_TRUE(LimitHeaders(r).empty());
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "tokens");
}

TEST_F(ProfileTest, ProfileChangesByPutAndOpenAIIsTheDefault) {
  Start(Profile::kOpenAI);
  HttpResponse r = Post(Chat(10));
  EXPECT_EQ(Header(r, "x-ratelimit-reset-requests"), "19.75s");
  EXPECT_EQ(json::parse(Call("GET", "/admin/config").body)["profile"], "openai");
  ASSERT_EQ(Call("PUT", "/admin/config", R"({"profile":"bare"})").status, 200);
  r = Post(Chat(10));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(LimitHeaders(r).empty());
  EXPECT_EQ(MockConfig{}.profile, Profile::kOpenAI);
  EXPECT_EQ(MockConfig{}.overload.share, 0);
}

TEST_F(ProfileTest, OverloadShareIsExactOnePerBlockAndConsumesNothing) {
  Start(Profile::kAnthropic, {0.25, 529, 2500});
  std::string pattern;
  int overloaded = 0;
  for (int i = 0; i < 12; ++i) {  // 3 pass, 9 are 429s; 3 of the 12 are 529s
    HttpResponse r = Post(Chat(1));
    pattern += r.status == 529 ? 'o' : '.';
    if (r.status != 529) continue;
    ++overloaded;
    EXPECT_EQ(Header(r, "retry-after"), "3");  // ceil(2.5 s)
    EXPECT_FALSE(Has(r, "retry-after-ms"));
    const json body = json::parse(r.body);
    EXPECT_EQ(body["error"], json({{"type", "overloaded_error"}, {"message", "Overloaded"}}));
    EXPECT_EQ(body["request_id"], Header(r, "request-id"));
    EXPECT_TRUE(Has(r, "anthropic-ratelimit-requests-remaining"));
  }
  EXPECT_EQ(overloaded, 3);
  for (int block = 0; block < 3; ++block) {
    EXPECT_EQ(std::count(pattern.begin() + 4 * block, pattern.begin() + 4 * block + 4, 'o'), 1)
        << pattern;
  }
  const json stats = json::parse(Call("GET", "/stats").body);
  EXPECT_EQ(stats["responses"]["529"], 3);
  EXPECT_EQ(stats["responses"]["200"], 3);  // the overloads took nothing from the 3 requests
  EXPECT_EQ(stats["responses"]["429"], 6);

  // The same seed gives the same calls; a PUT of `overload` restarts the count.
  std::unique_ptr<Service> first = std::move(service_);
  Start(Profile::kAnthropic, {0.25, 529, 2500});
  std::string again;
  for (int i = 0; i < 12; ++i) again += Post(Chat(1)).status == 529 ? 'o' : '.';
  EXPECT_EQ(again, pattern);
  ASSERT_EQ(Call("PUT", "/admin/config", R"({"overload":{"share":0.25,"status":529}})").status,
            200);
  std::string restarted;
  for (int i = 0; i < 4; ++i) restarted += Post(Chat(1)).status == 529 ? 'o' : '.';
  EXPECT_EQ(restarted, pattern.substr(0, 4));
}

TEST_F(ProfileTest, OverloadExactCountPhaseFromTheSeedAndShareBounds) {
  std::set<size_t> first_positions;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Start(Profile::kOpenAI, {0.1, 503, 0}, seed);
    std::string pattern;
    for (int i = 0; i < 100; ++i) pattern += Post(Chat(1)).status == 503 ? 'o' : '.';
    EXPECT_EQ(std::count(pattern.begin(), pattern.end(), 'o'), 10) << seed;
    for (int block = 0; block < 10; ++block) {
      EXPECT_EQ(std::count(pattern.begin() + 10 * block, pattern.begin() + 10 * block + 10, 'o'), 1)
          << pattern;
    }
    first_positions.insert(pattern.find('o'));
  }
  EXPECT_GT(first_positions.size(), 1u);  // the seed moves the phase
  Start(Profile::kOpenAI, {1.0, 503, 0});
  HttpResponse r = Post(Chat(1));
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"error":{"message":"The engine is currently overloaded, please try )"
                        R"(again later.","type":"server_error","param":null,"code":null}})"));
  EXPECT_FALSE(Has(r, "retry-after"));
  EXPECT_FALSE(Has(r, "retry-after-ms"));
  EXPECT_EQ(Header(r, "x-ratelimit-remaining-requests"), "3");
  EXPECT_TRUE(Has(r, "x-request-id"));
  Start(Profile::kAzure, {1.0, 503, 1500});
  r = Post(Chat(1));
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(Header(r, "retry-after-ms"), "1500");
  EXPECT_EQ(Header(r, "retry-after"), "2");
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"error":{"code":"503","message":"The service is temporarily )"
                        R"(overloaded. Please try again later."}})"));
  Start(Profile::kOpenAI, {0.0, 529, 100});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Post(Chat(1)).status, 200);
}

TEST(ProfileConfig, ParsesPrintsAndRefusesBadValues) {
  auto c = ConfigFromJson(
      json::parse(
          R"({"profile":"azure","overload":{"share":0.5,"status":529,"retry_after_ms":250}})"),
      MockConfig{});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->profile, Profile::kAzure);
  EXPECT_EQ(c->overload.share, 0.5);
  EXPECT_EQ(c->overload.status, 529);
  EXPECT_EQ(c->overload.retry_after_ms, 250);
  const json printed = ConfigToJson(*c);
  EXPECT_EQ(printed["profile"], "azure");
  EXPECT_EQ(printed["overload"], json({{"share", 0.5}, {"status", 529}, {"retry_after_ms", 250}}));
  EXPECT_EQ(ConfigToJson(*ConfigFromJson(printed, MockConfig{})), printed);
  // An overload object is replaced as a whole: missing members take the defaults.
  auto d = ConfigFromJson(json::parse(R"({"overload":{"share":0.2}})"), *c);
  EXPECT_EQ(d->overload.status, 503);
  EXPECT_EQ(d->overload.retry_after_ms, 0);
  EXPECT_EQ(d->profile, Profile::kAzure);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"profile":"gcp"})", "profile: must be openai | azure | anthropic | bare, got \"gcp\""},
      {R"({"overload":{"share":1.5}})", "overload.share: must be a number in [0, 1], got 1.5"},
      {R"({"overload":{"status":500}})",
       "overload.status: must be an integer in [503, 529], got 500"},
      {R"({"overload":{"status":510}})", "overload.status: must be 503 or 529, got 510"},
      {R"({"overload":{"retry_after_ms":-1}})",
       "overload.retry_after_ms: must be a number in [0, 3.6e+06], got -1"},
      {R"({"overload":{"colour":1}})", "overload.colour: unknown field"},
      {R"({"overload":3})", "overload: must be an object"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_EQ(ConfigFromJson(json::parse(text), MockConfig{}).status().message(), message) << text;
  }
}

TEST(ProfileConfig, Flags) {
  const char* argv[] = {"mockapi", "--profile",         "bare", "--overload-share",
                        "0.25",    "--overload-status", "529",  "--overload-retry-after-ms",
                        "800"};
  auto cl = ParseCommandLine(9, argv);
  ASSERT_TRUE(cl.ok()) << cl.status().ToString();
  EXPECT_EQ(cl->config.profile, Profile::kBare);
  EXPECT_EQ(cl->config.overload.share, 0.25);
  EXPECT_EQ(cl->config.overload.status, 529);
  EXPECT_EQ(cl->config.overload.retry_after_ms, 800);
  const char* bad[] = {"mockapi", "--profile", "gemini"};
  EXPECT_EQ(ParseCommandLine(3, bad).status().message(),
            "profile: must be openai | azure | anthropic | bare, got \"gemini\"");
}

}  // namespace
}  // namespace bp::mockapi
