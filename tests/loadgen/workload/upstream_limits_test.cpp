// loadgen reads `upstream.limits` (and an upstream_limits event's `limits`)
// with mockapi's own reader (bp/limit_json.h): every limit mockapi's config
// refuses, loadgen refuses with the same reason, and the caps of a valid one.
#include <gtest/gtest.h>

#include <string>

#include "bp/loadgen/scenario.h"
#include "bp/loadgen/workload.h"
#include "bp/mockapi/config.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

json Workload(json limits) {
  json tenant = {{"id", "a"},      {"priority", 1},       {"concurrency", 1},
                 {"workflows", 1}, {"prompt_tokens", 10}, {"max_tokens", 5}};
  return {{"name", "w"},
          {"slots", 4},
          {"run_length_cap_s", 60},
          {"tenants", {tenant}},
          {"upstream", {{"limits", std::move(limits)}}}};
}

// mockapi's message for a config whose limits are `limits`; "" if accepted.
std::string MockapiError(const json& limits) {
  auto c = mockapi::ConfigFromJson({{"limits", limits}}, mockapi::MockConfig{});
  return c.ok() ? "" : c.status().message();
}

std::string LoadgenError(const json& limits) {
  auto w = ParseWorkload(Workload(limits), "w.json");
  return w.ok() ? "" : w.status().message();
}

// mockapi names the entry "limits[i]", loadgen "upstream.limits[i]" after the
// file name; the rest of the message is the same text.
std::string AsLoadgen(std::string mockapi_message) {
  const size_t at = mockapi_message.find("limits[");
  if (at != std::string::npos) mockapi_message.insert(at, "upstream.");
  return "w.json: " + mockapi_message;
}

TEST(UpstreamLimits, WhatMockapiRefusesLoadgenRefusesWithTheSameReason) {
  const json ok = {{"dimension", "requests"}, {"limit", 60}, {"window_s", 1}};
  auto with = [&ok](const char* key, json value) {
    json l = ok;
    l[key] = std::move(value);
    return l;
  };
  const json bad[] = {
      with("limit", 60.0),  // a whole number written as a float: not an integer
      with("limit", 60.5),
      with("limit", 0),
      with("limit", "60"),
      with("limit", int64_t{1} << 51),
      with("window_s", 0),
      with("window_s", 1e8),
      with("window_s", "1"),
      with("dimension", "rpm"),
      with("dimension", ""),
      with("algorithm", "leaky_bucket"),
      with("algorithm", 3),
      with("foo", 1),
      json::array({1}),                 // not an object
      with("limit", int64_t{1} << 49),  // limit * window_us overflows
      [&] {
        json l = with("algorithm", "quantized");
        l["quantum_s"] = 5;  // above window_s
        return l;
      }(),
      [&] {
        json l = with("algorithm", "quantized");
        l["window_s"] = 60;
        l["quantum_s"] = 0.5;  // 60 * 0.5 / 60 < 1 per quantum
        return l;
      }(),
  };
  for (const json& b : bad) {
    const json limits = b.is_array() ? b : json::array({b});
    const std::string m = MockapiError(limits);
    ASSERT_NE(m, "") << "mockapi accepts " << limits.dump();
    EXPECT_EQ(LoadgenError(limits), AsLoadgen(m)) << limits.dump();
  }
  // The same reader for a scenario's upstream_limits event.
  json doc = Workload(json::array({ok}));
  doc["events"] = {{{"type", "upstream_limits"}, {"at_s", 1}, {"limits", {with("limit", 1.5)}}}};
  auto w = ParseWorkload(doc, "w.json");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "w.json: events[0].limits[0].limit: must be an integer in [1, 1125899906842624], "
            "got 1.5");
}

TEST(UpstreamLimits, LoadgenAlsoRequiresWhatItsCapsNeed) {
  // mockapi fills absent fields from its defaults (a PUT may change one); a
  // workload must write out the dimension, the limit and the window.
  for (const char* key : {"dimension", "limit", "window_s"}) {
    json l = {{"dimension", "requests"}, {"limit", 60}, {"window_s", 1}};
    l.erase(key);
    EXPECT_EQ(MockapiError(json::array({l})), "");
    EXPECT_EQ(LoadgenError(json::array({l})),
              std::string("w.json: upstream.limits[0].") + key + ": missing (required)");
  }
  EXPECT_EQ(LoadgenError(json::array()), "w.json: upstream.limits: must be a non-empty array");
}

TEST(UpstreamLimits, CapsOfValidLimitsAreMockapisRatesAndCapacities) {
  const json limits = json::parse(R"([
    {"dimension": "requests", "algorithm": "quantized", "limit": 600, "window_s": 60,
     "quantum_s": 1},
    {"dimension": "requests", "limit": 20, "window_s": 1},
    {"dimension": "tokens", "algorithm": "token_bucket", "limit": 60000, "window_s": 60},
    {"dimension": "input_tokens", "limit": 5, "window_s": 1}
  ])");
  ASSERT_EQ(MockapiError(limits), "");
  auto caps = CapsOfLimits(limits, "upstream.limits");
  ASSERT_TRUE(caps.ok()) << caps.status().message();
  EXPECT_EQ(caps->requests_per_s, 10.0 + 20.0);
  EXPECT_EQ(caps->max_requests_per_call, 10.0);  // the quantized share 600 * 1 / 60
  EXPECT_EQ(caps->tokens_per_s, 1000.0);
  EXPECT_EQ(caps->max_tokens_per_call, 60000.0);
  // A quantized limit without quantum_s has mockapi's default quantum of 1 s.
  auto q = CapsOfLimits(json::parse(R"([{"dimension": "requests", "algorithm": "quantized",
                                          "limit": 120, "window_s": 60}])"),
                        "upstream.limits");
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->max_requests_per_call, 2.0);
}

}  // namespace
}  // namespace bp::loadgen
