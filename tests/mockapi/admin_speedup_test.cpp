// PUT /admin/config with "speedup" (RealTimePatch, config.h): the patch's
// durations are paper units and mockapi divides each by the speedup, so
// loadgen PUTs its workload's upstream section as written.
#include <gtest/gtest.h>

#include "bp/mockapi/config.h"
#include "bp/mockapi/service.h"
#include "service_fixture.h"

namespace bp::mockapi {
namespace {

using namespace bp::mockapi::testing;  // NOLINT(build/namespaces): the fixture
using nlohmann::json;

TEST(AdminSpeedup, DividesEveryDurationByTheSpeedupAndKeepsTheRest) {
  const json paper = json::parse(R"({
    "speedup": 10, "profile": "anthropic",
    "limits": [{"dimension": "requests", "algorithm": "quantized", "limit": 30, "window_s": 1,
                "quantum_s": 0.5}],
    "latency": {"min_ms": 50, "max_ms": 150, "per_output_token_ms": 2},
    "overload": {"share": 0.1, "status": 529, "retry_after_ms": 2000}})");
  auto real = RealTimePatch(paper);
  ASSERT_TRUE(real.ok()) << real.status().message();
  EXPECT_FALSE(real->contains("speedup"));
  EXPECT_EQ((*real)["limits"][0]["window_s"], 1.0 / 10);
  EXPECT_EQ((*real)["limits"][0]["quantum_s"], 0.5 / 10);
  EXPECT_EQ((*real)["limits"][0]["limit"], 30);  // per window: the rate x 10
  EXPECT_EQ((*real)["latency"]["min_ms"], 5.0);
  EXPECT_EQ((*real)["latency"]["max_ms"], 15.0);
  EXPECT_EQ((*real)["latency"]["per_output_token_ms"], 0.2);
  EXPECT_EQ((*real)["overload"]["retry_after_ms"], 200.0);
  EXPECT_EQ((*real)["overload"]["share"], 0.1);
  EXPECT_EQ((*real)["profile"], "anthropic");
  // Without a speedup the patch is unchanged.
  json plain = paper;
  plain.erase("speedup");
  EXPECT_EQ(*RealTimePatch(plain), plain);
}

TEST(AdminSpeedup, BadSpeedupsAreRefused) {
  for (const json& v : {json(0), json(-2), json("10"), json(nullptr)}) {
    auto r = RealTimePatch({{"speedup", v}});
    ASSERT_FALSE(r.ok()) << v.dump();
    EXPECT_EQ(r.status().message(), "speedup: must be a finite number > 0, got " + v.dump());
  }
}

TEST(AdminSpeedup, ServiceUpdateScalesAndRefusesWithNoChange) {
  FakeClock clock(1'000'000);
  auto s = Service::Create(MockConfig{}, clock);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->UpdateConfig(
                      {{"speedup", 4},
                       {"limits", {{{"dimension", "requests"}, {"limit", 5}, {"window_s", 1.0}}}},
                       {"overload", {{"share", 0.1}, {"retry_after_ms", 2000}}}})
                  .ok());
  MockConfig c = (*s)->config();
  ASSERT_EQ(c.limits.size(), 1u);
  EXPECT_EQ(c.limits[0].window_s, 0.25);
  EXPECT_EQ(c.limits[0].limit, 5);
  EXPECT_EQ(c.overload.retry_after_ms, 500.0);
  // A window below the limiter's 1 us resolution once scaled: the limiter's
  // reason, and the config stays as it was.
  const Status bad = (*s)->UpdateConfig(
      {{"speedup", 1000}, {"limits", {{{"dimension", "requests"}, {"window_s", 1e-4}}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "limits[0].window_s: must be a number in [1e-06, 1e+07] once divided by the speedup "
            "1000, i.e. in [0.001, 1e+10] as sent, got 0.0001");
  EXPECT_EQ((*s)->config().limits[0].window_s, 0.25);
  EXPECT_FALSE((*s)->UpdateConfig({{"speedup", "x"}}).ok());
}

// The errors of a PUT with a speedup quote the values as the client sent
// them (they quoted the quotients: "got 1e-07" for a window_s of 0.0001),
// with the speedup and the range as sent.
TEST_F(ServiceTest, AdminPutErrorsQuoteTheValuesAsSent) {
  Start(MockConfig{});
  const std::string before = Call("GET", "/admin/config").body;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"speedup":1000,"limits":[{"dimension":"requests","limit":5,"window_s":0.0001}]})",
       "limits[0].window_s: must be a number in [1e-06, 1e+07] once divided by the speedup 1000, "
       "i.e. in [0.001, 1e+10] as sent, got 0.0001"},
      {R"({"speedup":0.5,"limits":[{"dimension":"requests","limit":5,"window_s":1,)"
       R"("algorithm":"quantized","quantum_s":6000000}]})",
       "limits[0].quantum_s: must be a number in [1e-06, 1e+07] once divided by the speedup 0.5, "
       "i.e. in [5e-07, 5e+06] as sent, got 6000000"},
      {R"({"speedup":4,"latency":{"min_ms":0,"max_ms":20000000}})",
       "latency.max_ms: must be a number in [0, 3.6e+06] once divided by the speedup 4, i.e. in "
       "[0, 1.44e+07] as sent, got 20000000"},
      {R"({"speedup":10,"latency":{"min_ms":-5}})",
       "latency.min_ms: must be a number in [0, 3.6e+06] once divided by the speedup 10, i.e. in "
       "[0, 3.6e+07] as sent, got -5"},
      {R"({"speedup":0.01,"overload":{"share":0.1,"retry_after_ms":40000}})",
       "overload.retry_after_ms: must be a number in [0, 3.6e+06] once divided by the speedup "
       "0.01, i.e. in [0, 36000] as sent, got 40000"},
      // A combination is checked after the division: the note names the speedup.
      {R"({"speedup":10,"limits":[{"dimension":"requests","algorithm":"quantized","limit":5,)"
       R"("window_s":1,"quantum_s":2}]})",
       "limits[0]: quantum_s must be in (0, window_s], got 0.200000 (durations after the "
       "division by the speedup 10)"},
  };
  for (const auto& [body, message] : cases) {
    HttpResponse r = Call("PUT", "/admin/config", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(json::parse(r.body)["error"]["message"], message) << body;
  }
  // Without a speedup the message is ConfigFromJson's, unchanged.
  EXPECT_EQ(
      json::parse(
          Call("PUT", "/admin/config", R"({"latency":{"min_ms":-5}})").body)["error"]["message"],
      "latency.min_ms: must be a number in [0, 3.6e+06], got -5");
  EXPECT_EQ(Call("GET", "/admin/config").body, before);
}

}  // namespace
}  // namespace bp::mockapi
