// Workload values that parse but that the run cannot use: weights outside
// bpctl's range [1e-6, 1e6] (workload.h kMinGateWeight/kMaxGateWeight), and a
// --speedup at which mockapi would refuse the scaled upstream section
// (runner.h ValidateSpeedupFor), refused before any run with the field named.
#include <gtest/gtest.h>

#include "bp/loadgen/runner.h"
#include "bp/loadgen/workload.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

json Doc() {
  json tenant = {{"id", "a"},      {"priority", 1},       {"concurrency", 1},
                 {"workflows", 1}, {"prompt_tokens", 10}, {"max_tokens", 5}};
  return {{"name", "w"},
          {"slots", 4},
          {"run_length_cap_s", 60},
          {"priority_weights", {0.6, 0.4}},
          {"tenants", {tenant}},
          {"upstream",
           {{"limits", {{{"dimension", "requests"}, {"limit", 60}, {"window_s", 60}}}},
            {"latency", {{"min_ms", 50}, {"max_ms", 150}, {"per_output_token_ms", 2}}}}}};
}

std::string Error(const json& doc) {
  auto w = ParseWorkload(doc, "w.json");
  return w.ok() ? "" : w.status().message();
}

// The gate-range check of a file that parses, at speedup 1 (its own units).
std::string GateError(const json& doc) {
  auto w = ParseWorkload(doc, "w.json");
  if (!w.ok()) return "parse: " + w.status().message();
  return CheckGateRanges(*w, 1).message();
}

TEST(WorkloadWeights, OutsideBpctlsRangeAreRefusedWithTheField) {
  EXPECT_EQ(Error(Doc()), "");
  json d = Doc();
  d["tenants"][0]["weight"] = 1e300;  // was accepted
  EXPECT_EQ(Error(d), "w.json: tenants[0].weight: must be a number in [1e-06, 1e+06], got 1e+300");
  d["tenants"][0]["weight"] = 1e6;  // the bounds are in
  EXPECT_EQ(Error(d), "");
  d["tenants"][0]["weight"] = 1e-6;
  EXPECT_EQ(Error(d), "");
  d["tenants"][0]["weight"] = 0;
  EXPECT_EQ(Error(d), "w.json: tenants[0].weight: must be a number in [1e-06, 1e+06], got 0");
  d = Doc();
  d["priority_weights"] = {0.6, 2e6};
  EXPECT_EQ(Error(d),
            "w.json: priority_weights[1]: must be a number in [1e-06, 1e+06], got 2000000.0");
  d = Doc();
  d["events"] = {{{"type", "tenant_weight"}, {"at_s", 1}, {"tenant", "a"}, {"weight", 1e300}}};
  EXPECT_EQ(Error(d), "w.json: events[0].weight: must be a number in [1e-06, 1e+06], got 1e+300");
  d["events"] = {{{"type", "class_omega"}, {"at_s", 1}, {"priority", 2}, {"omega", 1e-7}}};
  EXPECT_EQ(Error(d), "w.json: events[0].omega: must be a number in [1e-06, 1e+06], got 1e-07");
  d["events"] = {{{"type", "class_omega"}, {"at_s", 1}, {"priority", 2}, {"omega", 1e6}}};
  EXPECT_EQ(Error(d), "");
}

TEST(WorkloadSpeedup, WhatMockapiRefusesAfterScalingIsRefusedNamingTheFlag) {
  auto w = ParseWorkload(Doc(), "w.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(ValidateSpeedupFor(*w, 1000).ok());
  // window 60 s / 1e-5 = 6e6 s (fits), latency 50 ms / 1e-5 = 5e6 ms > 3.6e6.
  EXPECT_EQ(ValidateSpeedupFor(*w, 1e-5).message(),
            "--speedup 1e-05: w.json: upstream.latency.min_ms: must be a number in [0, 3.6e+06] "
            "once divided by the speedup 1e-05, i.e. in [0, 36] as sent, got 50");
  json d = Doc();
  d["upstream"].erase("latency");
  w = ParseWorkload(d, "w.json");
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(ValidateSpeedupFor(*w, 1e-5).ok());
  // 60 s / 1e-7 = 6e8 s: above the 1e7 s windows mockapi takes.
  const std::string m = ValidateSpeedupFor(*w, 1e-7).message();
  EXPECT_EQ(m.substr(0, 54), "--speedup 1e-07: w.json: upstream.limits[0].window_s: ");
  EXPECT_NE(m.find("i.e. in [1e-13, 1] as sent, got 60"), std::string::npos) << m;
  // An upstream_limits event's limits are PUT scaled as well.
  d["events"] = {{{"type", "upstream_limits"},
                  {"at_s", 1},
                  {"limits", {{{"dimension", "requests"}, {"limit", 60}, {"window_s", 1e-4}}}}}};
  w = ParseWorkload(d, "w.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(ValidateSpeedupFor(*w, 1e-5).ok());  // 10 s
  // 1e-4 s / 1000 = 1e-7 s: below the 1e-6 s windows mockapi takes.
  EXPECT_EQ(ValidateSpeedupFor(*w, 1000).message().substr(0, 52),
            "--speedup 1000: w.json: events[0].limits[0].window_s");
}

// The gate caps a bp run derives must be inside bp/gate_ranges.h's ranges, the ones
// bpctl enforces: loadgen configured a burst of 1e299 s, 1e8 s, and 1.1e19
// requests per second, which `bpctl import` of the same target refuses.
TEST(WorkloadGateRanges, DerivedCapsOutsideBpctlsRangesAreRefusedWithTheField) {
  json d = Doc();
  d["gate"] = {{"burst_s", 1e300}};
  EXPECT_EQ(GateError(d),
            "w.json: gate.burst_s: 1e+300 gives the gate a burst_s (paper seconds) of 1e+300, must "
            "be in [0.001, "
            "3600] (bp/gate_ranges.h, as bpctl)");
  d["gate"]["burst_s"] = 1e9;
  EXPECT_EQ(
      GateError(d),
      "w.json: gate.burst_s: 1e+09 gives the gate a burst_s (paper seconds) of 1e+09, must be in "
      "[0.001, "
      "3600] (bp/gate_ranges.h, as bpctl)");
  d["gate"]["burst_s"] = 3600;  // the bounds are in
  EXPECT_EQ(GateError(d), "");
  d["gate"]["burst_s"] = 0.001;
  EXPECT_EQ(GateError(d), "");
  d["gate"]["burst_s"] = 0.0009;
  EXPECT_NE(GateError(d).find("gate.burst_s: 0.0009 gives"), std::string::npos);
  // 1125899906842624 requests per 0.001 s: 1.1e18 req/s (1e9 rpm is the most).
  d = Doc();
  d["upstream"]["limits"][0]["limit"] = 1125899906842624;
  d["upstream"]["limits"][0]["window_s"] = 0.001;
  EXPECT_EQ(GateError(d),
            "w.json: upstream.limits (requests per s x gate.cap_factor): 1.1259e+18 gives the "
            "gate a requests_per_s of 1.1259e+18, must be in [1.66667e-05, 1.66667e+07] (0.001 "
            "to 1e9 rpm) (bp/gate_ranges.h, as bpctl)");
  // A tokens limit beyond 1e12 tpm.
  d = Doc();
  d["upstream"]["limits"].push_back(
      {{"dimension", "tokens"}, {"limit", int64_t{2000000000000}}, {"window_s", 1}});
  EXPECT_EQ(GateError(d),
            "w.json: upstream.limits (tokens per s x gate.cap_factor): 2e+12 gives the gate a "
            "tokens_per_s of 2e+12, must be in [0, 1.66667e+10] (0 to 1e12 tpm) "
            "(bp/gate_ranges.h, as bpctl)");
  // 2e9 requests per 600 s: 2e8 rpm is inside, but one call of 2e9 requests
  // is beyond the largest cost bpctl takes.
  d = Doc();
  d["upstream"]["limits"][0]["limit"] = 2000000000;
  d["upstream"]["limits"][0]["window_s"] = 600;
  EXPECT_EQ(GateError(d),
            "w.json: upstream.limits (the largest requests limit): 2e+09 gives the gate a "
            "max_cost_requests of 2e+09, must be in [0, 1e+09] (bp/gate_ranges.h, as bpctl)");
  // At the run's speedup: rates x speedup are checked; burst_s in paper
  // seconds (the gate gets burst_s / speedup, the same bucket content).
  d = Doc();
  d["gate"] = {{"burst_s", 0.1}};
  auto w = ParseWorkload(d, "w.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(CheckGateRanges(*w, 1000).ok());         // 1e-4 s of 1000x the cap
  EXPECT_EQ(GateCapsOf(*w, 10).requests_per_s, 10.0);  // 1 req/s x 10
  EXPECT_EQ(GateCapsOf(*w, 10).burst_s, 0.01);
  EXPECT_EQ(GateCapsOf(*w, 10).max_cost_requests, 60.0);
}

// Durations beyond what a run can use are refused, not run: a dispatch latency
// of 1e300 ms idled every run to its cap, and a queue TTL of 1e300 s wrapped
// to the gate's 100 ms floor when taken as int64 milliseconds.
TEST(WorkloadDurations, BeyondTheirRangeAreRefusedWithTheField) {
  json d = Doc();
  d["dispatch_latency_ms"] = 1e300;
  EXPECT_EQ(Error(d), "w.json: dispatch_latency_ms: must be a number in [0, 3.6e+06], got 1e+300");
  d["dispatch_latency_ms"] = -1;
  EXPECT_EQ(Error(d), "w.json: dispatch_latency_ms: must be a number in [0, 3.6e+06], got -1");
  d["dispatch_latency_ms"] = 3.6e6;  // the bounds are in
  EXPECT_EQ(Error(d), "");
  d["dispatch_latency_ms"] = 0;
  EXPECT_EQ(Error(d), "");
  d = Doc();
  d["gate"] = {{"queue_ttl_s", 1e300}};
  EXPECT_EQ(Error(d), "w.json: gate.queue_ttl_s: must be a number in [0.001, 86400], got 1e+300");
  d["gate"] = {{"queue_ttl_s", 0}};
  EXPECT_EQ(Error(d), "w.json: gate.queue_ttl_s: must be a number in [0.001, 86400], got 0");
  d["gate"] = {{"queue_ttl_s", 86400}};
  EXPECT_EQ(Error(d), "");
}

}  // namespace
}  // namespace bp::loadgen
