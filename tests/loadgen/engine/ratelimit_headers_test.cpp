// loadgen's reading of an answer's rate-limit headers (http_client.h,
// ParseRateLimitHeaders): the conformance cases of
// tests/conformance/headers.json, which the Python and Node clients' parsers
// run too, so the three feed the header rule alike; then RFC 3339 edge cases
// and the moment HttpClient reads an instant against.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bp/loadgen/http_client.h"
#include "engine_scripted_upstream.h"

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

// The provider counts a call, and reads its remaining budget, as the call
// arrives; its reset instant must be read against that moment too, or R / T
// pairs the budget at the count with the time left after the service time.
// The wall clock here is fake: 08:30:00Z until the server has read the
// request, 08:30:00.300Z after (a call served in 300 ms). The answer's
// reset, 08:30:01Z, is 1000 ms after the send (700 ms after the answer).
TEST(RateLimitHeaders, HttpClientReadsAnInstantAgainstTheSend) {
  constexpr double kSendMs = 1796286600000;  // 2026-12-03T08:30:00Z
  bp::test::ScriptedAnswer ok = bp::test::ScriptedAnswer::Ok();
  ok.headers = {{"anthropic-ratelimit-requests-remaining", "4"},
                {"anthropic-ratelimit-requests-reset", "2026-12-03T08:30:01Z"}};
  bp::test::ScriptedUpstream upstream({ok});
  boost::asio::io_context io;
  HttpClientOptions o;
  o.endpoint.port = upstream.port();
  o.unix_now_ms = [&upstream] { return upstream.requests() == 0 ? kSendMs : kSendMs + 300; };
  HttpClient client(io, o);
  std::optional<HttpResponse> got;
  client.Request("POST", "/v1/chat/completions", std::make_shared<const std::string>("{}"),
                 [&got](HttpResponse r) { got = std::move(r); });
  io.run_for(std::chrono::seconds(10));
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->status, 200) << got->error;
  EXPECT_EQ(upstream.requests(), 1);
  EXPECT_EQ(got->ratelimit.remaining_requests, 4);
  EXPECT_EQ(got->ratelimit.reset_requests_ms, 1000);  // 08:30:01 - 08:30:00, not 700
  EXPECT_FALSE(got->ratelimit.reset_tokens_ms.has_value());
}

}  // namespace
}  // namespace bp::loadgen
