// loadgen's reading of an answer's rate-limit headers (http_client.h,
// ParseRateLimitHeaders): the conformance cases of
// tests/conformance/headers.json, which the Python and Node clients' parsers
// run too, so the three feed the header rule alike; then RFC 3339 edge cases.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "bp/loadgen/http_client.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

TEST(RateLimitHeaders, ConformanceCases) {
  std::ifstream in(std::string(BP_SOURCE_DIR) + "/tests/conformance/headers.json");
  ASSERT_TRUE(in.good());
  const json doc = json::parse(in);
  ASSERT_GE(doc["cases"].size(), 6u);
  for (const json& c : doc["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::map<std::string, std::string> headers;
    for (const auto& [name, value] : c["headers"].items()) headers[name] = value.get<std::string>();
    const RateLimitHeaders rl = ParseRateLimitHeaders(
        [&headers](const char* name) -> std::optional<std::string_view> {
          auto it = headers.find(name);
          if (it == headers.end()) return std::nullopt;
          return std::string_view(it->second);
        },
        c["now_ms"].get<double>());
    const json& want = c["expect"];
    EXPECT_EQ(rl.remaining_requests.value_or(-1), want["remaining_requests"].get<int64_t>());
    EXPECT_EQ(rl.reset_requests_ms.value_or(-1), want["reset_requests_ms"].get<double>());
    EXPECT_EQ(rl.remaining_tokens.value_or(-1), want["remaining_tokens"].get<int64_t>());
    EXPECT_EQ(rl.reset_tokens_ms.value_or(-1), want["reset_tokens_ms"].get<double>());
  }
}

TEST(RateLimitHeaders, Rfc3339Instants) {
  // 2026-12-03T08:30:00Z = 1796286600 s after the epoch.
  EXPECT_EQ(ParseRfc3339Ms("2026-12-03T08:30:00Z"), 1796286600000.0);
  EXPECT_EQ(ParseRfc3339Ms("2026-12-03T08:30:00.125Z"), 1796286600125.0);
  EXPECT_EQ(ParseRfc3339Ms("2026-12-03T03:00:00-05:30"), 1796286600000.0);  // 03:00 + 5:30
  EXPECT_EQ(ParseRfc3339Ms("1970-01-01T00:00:01z"), 1000.0);
  EXPECT_FALSE(ParseRfc3339Ms("2026-12-03T08:30:00").has_value());       // no offset
  EXPECT_FALSE(ParseRfc3339Ms("2026-13-03T08:30:00Z").has_value());      // month 13
  EXPECT_FALSE(ParseRfc3339Ms("2026-12-03T08:30:00.Z").has_value());     // empty fraction
  EXPECT_FALSE(ParseRfc3339Ms("2026-12-03T08:30:00+0100").has_value());  // offset without ':'
  EXPECT_FALSE(ParseRfc3339Ms("").has_value());
}

}  // namespace
}  // namespace bp::loadgen
