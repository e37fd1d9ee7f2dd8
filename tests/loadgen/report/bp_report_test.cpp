// The bp configuration reports each upstream outcome to the gate (the
// adaptive caps' input): the x-ratelimit-* header parsing, the report built
// from an answer, and a run against a scripted upstream whose 429 lowers the
// learned token cap in a real Valkey by exactly the scripted rule.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "bp/loadgen/bp_configuration.h"
#include "bp/loadgen/runner.h"
#include "bp/valkey.h"
#include "engine_scripted_upstream.h"
#include "support/valkey_server.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

using bp::test::ScriptedAnswer;
using bp::test::ScriptedUpstream;

TEST(BpReport, GoDurations) {
  EXPECT_EQ(ParseGoDurationMs("19.75s"), 19750);
  EXPECT_EQ(ParseGoDurationMs("750ms"), 750);
  EXPECT_EQ(ParseGoDurationMs("6m0s"), 360000);
  EXPECT_EQ(ParseGoDurationMs("1h2m3.5s"), 3723500);
  EXPECT_EQ(ParseGoDurationMs("0s"), 0);
  EXPECT_EQ(ParseGoDurationMs("2"), 2000);  // plain seconds
  EXPECT_FALSE(ParseGoDurationMs("").has_value());
  EXPECT_FALSE(ParseGoDurationMs("5x").has_value());
  EXPECT_FALSE(ParseGoDurationMs("ms").has_value());
  EXPECT_FALSE(ParseGoDurationMs("-1").has_value());
}

TEST(BpReport, ReportOfAnAnswer) {
  CallResult ok;
  ok.status = 200;
  ok.ratelimit.remaining_requests = 7;
  ok.ratelimit.reset_tokens_ms = 120;
  UpstreamReport r = ReportOf(ok, *TimeScale::Of(5));
  EXPECT_EQ(r.outcome, UpstreamReport::Outcome::kOk);
  EXPECT_EQ(r.remaining_requests, 7);
  EXPECT_EQ(r.remaining_tokens, -1);
  EXPECT_EQ(r.reset_tokens_ms, 120);
  EXPECT_EQ(r.reset_requests_ms, -1);

  CallResult throttled;
  throttled.status = 429;
  throttled.bound = "tokens";
  throttled.retry_after_paper_ms = 500;  // at speedup 5: 100 real ms
  r = ReportOf(throttled, *TimeScale::Of(5));
  EXPECT_EQ(r.outcome, UpstreamReport::Outcome::kThrottled);
  EXPECT_EQ(r.bound, UpstreamReport::Bound::kTokens);
  EXPECT_EQ(r.retry_after_ms, 100);
  throttled.bound = "requests";
  EXPECT_EQ(ReportOf(throttled, *TimeScale::Of(5)).bound, UpstreamReport::Bound::kRequests);
  throttled.bound = "something_else";
  throttled.retry_after_paper_ms.reset();
  r = ReportOf(throttled, *TimeScale::Of(5));
  EXPECT_EQ(r.bound, UpstreamReport::Bound::kUnknown);
  EXPECT_EQ(r.retry_after_ms, -1);
  throttled.message_wait_paper_ms = 1000;  // "try again in 1s", no header: 200 real ms
  EXPECT_EQ(ReportOf(throttled, *TimeScale::Of(5)).retry_after_ms, 200);
  throttled.proxy_local = true;  // a gateway's own 429 says nothing of the upstream
  EXPECT_EQ(ReportOf(throttled, *TimeScale::Of(5)).outcome, UpstreamReport::Outcome::kOk);
}

// One activity; the upstream answers 429 (tokens, retry-after-ms 50,
// x-ratelimit-reset-tokens 150ms) once, then 200.
Workload AdaptWorkload(bool adapt) {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("adapt-test");
  doc["gate"] = {
      {"adapt", adapt}, {"adapt_beta", 0.5}, {"adapt_min_429", 1}, {"adapt_window_s", 0.01}};
  doc["upstream"]["limits"].push_back(
      {{"dimension", "tokens"}, {"algorithm", "fixed_window"}, {"limit", 6000}, {"window_s", 1}});
  return testing::BuildWorkload(doc);
}

TEST(BpReport, GateSectionAdaptFields) {
  nlohmann::json doc = {{"name", "x"},
                        {"slots", 1},
                        {"run_length_cap_s", 10},
                        {"tenants",
                         {{{"id", "t"},
                           {"priority", 1},
                           {"concurrency", 1},
                           {"workflows", 1},
                           {"prompt_tokens", 1},
                           {"max_tokens", 1}}}},
                        {"upstream",
                         {{"limits",
                           {{{"dimension", "requests"},
                             {"algorithm", "fixed_window"},
                             {"limit", 10},
                             {"window_s", 1}}}}}}};
  auto w = ParseWorkload(doc, "x.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_FALSE(w->gate_adapt);  // the paper's gate unless asked
  EXPECT_EQ(w->gate_cap_factor, 1);
  doc["gate"] = {{"adapt", true}, {"cap_factor", 2}, {"adapt_recover_s", 30}};
  w = ParseWorkload(doc, "x.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(w->gate_adapt);
  EXPECT_EQ(w->gate_cap_factor, 2);
  EXPECT_EQ(w->gate_adapt_recover_s, 30);
  EXPECT_TRUE(w->gate_adapt_headers);  // served calls' headers go to the gate unless asked
  doc["gate"] = {{"adapt", true}, {"adapt_headers", false}};
  w = ParseWorkload(doc, "x.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_FALSE(w->gate_adapt_headers);
  for (auto [field, value, message] :
       {std::tuple{"adapt", nlohmann::json("yes"),
                   "x.json: gate.adapt: must be true or false, got \"yes\""},
        std::tuple{"adapt_headers", nlohmann::json(1),
                   "x.json: gate.adapt_headers: must be true or false, got 1"},
        std::tuple{"adapt_beta", nlohmann::json(1),
                   "x.json: gate.adapt_beta: must be a number in (0, 1), got 1"},
        std::tuple{"cap_factor", nlohmann::json(0),
                   "x.json: gate.cap_factor: must be a finite number > 0, got 0"},
        std::tuple{"adapt_min_429", nlohmann::json(0), "x.json: gate.adapt_min_429: must be"},
        std::tuple{"share_rule", nlohmann::json("tree"),
                   "x.json: gate.share_rule: must be hier | flat, got \"tree\""},
        std::tuple{"class_policy", nlohmann::json("lexical"),
                   "x.json: gate.class_policy: must be fair | strict, got \"lexical\""}}) {
    doc["gate"] = {{field, value}};
    auto bad = ParseWorkload(doc, "x.json");
    ASSERT_FALSE(bad.ok()) << field;
    EXPECT_EQ(bad.status().message().rfind(message, 0), 0u) << bad.status().message();
  }
}

TEST(BpReport, AdaptiveWorkloadsParse) {
  // configs/adaptive (scripts/adaptive-caps.sh): six workloads, off and on.
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(BP_SOURCE_DIR "/configs/adaptive")) {
    if (e.path().extension() != ".json") continue;
    auto w = LoadWorkload(e.path().string());
    ASSERT_TRUE(w.ok()) << w.status().message();
    const bool on = e.path().stem().string().find("-adapt-on") != std::string::npos;
    EXPECT_EQ(w->gate_adapt, on) << e.path();
    EXPECT_EQ(w->gate_cap_factor, w->name.rfind("halved", 0) == 0 ? 2 : 1) << e.path();
    ++n;
  }
  EXPECT_EQ(n, 6);
}

TEST(BpReport, HeaderWorkloadsParse) {
  // configs/headers (scripts/header-caps.sh): adaptive caps fed by headers.
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(BP_SOURCE_DIR "/configs/headers")) {
    if (e.path().extension() != ".json") continue;
    auto w = LoadWorkload(e.path().string());
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_TRUE(w->gate_adapt && w->gate_adapt_headers) << e.path();
    ++n;
  }
  EXPECT_EQ(n, 4);
}

// The learned state of the one bp target on the server ("" if none).
std::string LearnedState(const std::string& valkey_url) {
  ValkeyConnection conn(ValkeyOptions{valkey_url, 1000, 2000});
  EXPECT_TRUE(conn.Connect(1000).ok());
  auto keys = conn.Command({"KEYS", "bp:{adapt-test-bp-*}:state"});
  EXPECT_TRUE(keys.ok());
  if (!keys.ok() || keys->elements.size() != 1) return "no target";
  auto ad = conn.Command({"HGET", keys->elements[0].str, "ad"});
  return ad.ok() ? ad->AsString() : "error";
}

void RunAgainstScript(bool adapt, const std::string& valkey_url) {
  ScriptedAnswer throttle = ScriptedAnswer::Throttle(50, "tokens");
  throttle.headers.push_back({"x-ratelimit-remaining-tokens", "0"});
  throttle.headers.push_back({"x-ratelimit-reset-tokens", "150ms"});
  ScriptedUpstream up({throttle});
  RunOptions o;
  o.configuration = "bp";
  o.upstream_url = up.url();
  o.valkey_url = valkey_url;
  o.configure_upstream = false;
  // A loaded test box can hold a gate call past the default 100 ms: it
  // would fail open (bp's runs here assert none do).
  o.gate_command_timeout_ms = 2000;
  auto r = RunOnce(AdaptWorkload(adapt), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->activities.size(), 1u);
  EXPECT_TRUE(r->activities[0].ok);
  EXPECT_EQ(r->activities[0].throttle_defers, 1);
  EXPECT_EQ(r->gate_fail_opens, 0u);
}

TEST(BpReport, A429LowersTheLearnedTokenCapInTheGate) {
  bp::test::ValkeyServer valkey;
  ASSERT_TRUE(valkey.running()) << valkey.error();
  RunAgainstScript(true, valkey.url());
  // "fr tr_us ft tt_us tau_us ws_us nr nt hr_us ht_us": tokens halved at
  // tt, held until tt + max(10 ms window, 50 ms retry-after, 150 ms reset).
  std::vector<double> ad;
  const std::string text = LearnedState(valkey.url());
  const char* p = text.c_str();
  char* end = nullptr;
  for (double v = std::strtod(p, &end); end != p; v = std::strtod(p, &end)) {
    ad.push_back(v);
    p = end;
  }
  ASSERT_EQ(ad.size(), 10u) << text;
  EXPECT_EQ(ad[0], 1);            // requests untouched
  EXPECT_EQ(ad[2], 0.5);          // tokens: beta * 1
  EXPECT_EQ(ad[4], 120'000'000);  // tau = 120 paper s at speedup 1, us
  EXPECT_EQ(ad[9] - ad[3], 150'000);
}

TEST(BpReport, WithoutAdaptTheGateLearnsNothing) {
  bp::test::ValkeyServer valkey;
  ASSERT_TRUE(valkey.running()) << valkey.error();
  RunAgainstScript(false, valkey.url());
  EXPECT_EQ(LearnedState(valkey.url()), "");
}

}  // namespace
}  // namespace bp::loadgen
