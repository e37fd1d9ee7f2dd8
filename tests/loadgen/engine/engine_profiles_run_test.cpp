// A short run per provider profile (docs/provider-profiles.md) against the
// real mockapi binary: the runner PUTs the workload's profile, the naive SDK
// model and bp finish all work, and a probe checks which retry headers the
// profile's 429 carries. Then overload runs (529 without a hint, 503 with one):
// every 529/503 is retried and their count is the configured share of the
// chat calls, exactly as mockapi's spread makes it. Each run is 8 activities
// at speedup 4 (a few real seconds).
#include <gtest/gtest.h>

#include <cmath>

#include "bp/loadgen/http_client.h"
#include "bp/loadgen/runner.h"
#include "mockapi_process.h"
#include "support/valkey_server.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

// One tenant, 4 slots, 8 one-activity workflows; `limit` requests per paper
// second, no service time.
Workload ProfileWorkload(const std::string& profile, int limit,
                         nlohmann::json overload = nlohmann::json()) {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("profile-" + profile);
  doc["slots"] = 4;
  doc["run_length_cap_s"] = 120;
  doc["tenants"][0]["concurrency"] = 4;
  doc["tenants"][0]["workflows"] = 8;
  nlohmann::json& upstream = doc["upstream"];
  upstream["profile"] = profile;
  upstream["latency"] = {{"min_ms", 0}, {"max_ms", 0}, {"per_output_token_ms", 0}};
  upstream["completion_tokens"] = {{"distribution", "fixed"}, {"value", 5}};
  upstream["limits"][0]["limit"] = limit;
  if (!overload.is_null()) upstream["overload"] = overload;
  return testing::BuildWorkload(doc);
}

RunRecords RunAgainst(const Workload& w, const std::string& config, const std::string& url,
                      const std::string& valkey) {
  RunOptions o;
  o.configuration = config;
  o.speedup = 4;
  o.upstream_url = url;
  o.valkey_url = valkey;
  // A loaded test box can hold a gate call past the default 100 ms: it
  // would fail open (bp's runs here assert none do).
  o.gate_command_timeout_ms = 2000;
  auto r = RunOnce(w, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : RunRecords{};
}

int CountStatus(const RunRecords& r, int status) {
  int n = 0;
  for (const auto& a : r.attempts) n += a.status == status && !a.proxy_local ? 1 : 0;
  return n;
}

int CountOk(const RunRecords& r) {
  int n = 0;
  for (const auto& a : r.activities) n += a.ok ? 1 : 0;
  return n;
}

// Chat calls until one is refused (at most 20); the 429's parsed headers.
HttpResponse Probe429(int port) {
  HttpEndpoint ep{"127.0.0.1", port};
  const std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
  HttpResponse r;
  for (int i = 0; i < 20; ++i) {
    r = HttpRequestBlocking(ep, "POST", "/v1/chat/completions", body, 5000);
    if (r.status == 429) break;
  }
  return r;
}

class EngineProfilesRun : public ::testing::Test {
 protected:
  void SetUp() override {
    binary_ = bp::test::MockapiBinary();
    ASSERT_FALSE(binary_.empty()) << bp::test::kNoMockapi;
    ASSERT_TRUE(valkey_.running()) << valkey_.error();
  }
  std::string binary_;
  bp::test::ValkeyServer valkey_;
};

TEST_F(EngineProfilesRun, EachProfileRunsToTheEndAndCarriesItsRetryHeaders) {
  struct Case {
    std::string profile;
    bool retry_after_ms, retry_after;
  };
  for (const Case& c : std::vector<Case>{{"openai", true, true},
                                         {"azure", true, true},
                                         {"anthropic", false, true},
                                         {"bare", false, false}}) {
    SCOPED_TRACE(c.profile);
    bp::test::MockapiProcess mockapi(binary_, {});
    ASSERT_TRUE(mockapi.running());
    const Workload w = ProfileWorkload(c.profile, 2);
    for (const std::string config : {"naive", "bp"}) {
      RunRecords r = RunAgainst(w, config, mockapi.url(), valkey_.url());
      EXPECT_EQ(CountOk(r), 8) << config;
      EXPECT_EQ(r.gate_fail_opens, 0u) << config;
      // naive: 4 slots, 8 calls at once against 2 per window: at least 4 are
      // refused however the calls fall across a window edge.
      if (config == "naive") {
        EXPECT_GE(CountStatus(r, 429), 3);
      }
      std::printf("%s %s: %zu attempts, %d x 429\n", c.profile.c_str(), config.c_str(),
                  r.attempts.size(), CountStatus(r, 429));
    }
    const HttpResponse p = Probe429(mockapi.port());
    ASSERT_EQ(p.status, 429);
    EXPECT_EQ(p.retry_after_ms.has_value(), c.retry_after_ms);
    EXPECT_EQ(p.retry_after_s.has_value(), c.retry_after);
    EXPECT_FALSE(p.should_retry.has_value());
  }
}

TEST_F(EngineProfilesRun, OverloadsAreRetriedAndTheirShareIsExact) {
  struct Case {
    std::string profile;
    nlohmann::json overload;
    int status;
  };
  const std::vector<Case> cases = {
      {"anthropic", {{"share", 0.25}, {"status", 529}}, 529},
      {"openai", {{"share", 0.25}, {"status", 503}, {"retry_after_ms", 400}}, 503}};
  for (const Case& c : cases) {
    for (const std::string config : {"naive", "bp"}) {
      SCOPED_TRACE(c.profile + " " + config);
      bp::test::MockapiProcess mockapi(binary_, {});
      ASSERT_TRUE(mockapi.running());
      // A cap that never binds: every refusal is an overload.
      RunRecords r = RunAgainst(ProfileWorkload(c.profile, 1000, c.overload), config, mockapi.url(),
                                valkey_.url());
      EXPECT_EQ(CountOk(r), 8);
      EXPECT_EQ(CountStatus(r, 429), 0);
      const int n = static_cast<int>(r.attempts.size());
      const int overloaded = CountStatus(r, c.status);
      EXPECT_EQ(n, 8 + overloaded);  // each overload costs exactly one more attempt
      EXPECT_LT(std::abs(overloaded - n / 4.0), 1.0) << overloaded << " of " << n;
      EXPECT_GE(overloaded, 2);
    }
  }
}

}  // namespace
}  // namespace bp::loadgen
