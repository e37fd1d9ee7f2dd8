// PUT /admin/config with "speedup" (RealTimePatch, config.h): the patch's
// durations are paper units and mockapi divides each by the speedup, so
// loadgen PUTs its workload's upstream section as written.
#include <gtest/gtest.h>

#include "bp/mockapi/config.h"
#include "bp/mockapi/service.h"

namespace bp::mockapi {
namespace {

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
    EXPECT_EQ(r.status().message(), "speedup must be a finite number > 0, got " + v.dump());
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
  EXPECT_EQ(bad.message().rfind("limits[0].window_s must be a number in [1e-06, 1e+07]", 0), 0u)
      << bad.message();
  EXPECT_EQ((*s)->config().limits[0].window_s, 0.25);
  EXPECT_FALSE((*s)->UpdateConfig({{"speedup", "x"}}).ok());
}

}  // namespace
}  // namespace bp::mockapi
