// The workload fields of the scale scenario: tenants[].count and
// gate.queue_ttl_s, and the shipped configs/scale/scale.json.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bp/loadgen/workload.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

json Doc(json tenants) {
  return {{"name", "w"},
          {"slots", 4},
          {"run_length_cap_s", 10},
          {"tenants", std::move(tenants)},
          {"upstream",
           {{"limits", json::array({{{"dimension", "requests"},
                                     {"algorithm", "fixed_window"},
                                     {"limit", 60},
                                     {"window_s", 1.0}}})}}}};
}

json Tenant(const std::string& id) {
  return {{"id", id},       {"priority", 1},       {"concurrency", 1},
          {"workflows", 1}, {"prompt_tokens", 10}, {"max_tokens", 5}};
}

TEST(WorkloadScale, CountExpandsIdsInOrder) {
  json many = Tenant("light");
  many["count"] = 3;
  json doc = Doc({Tenant("heavy"), many});
  doc["gate"] = {{"queue_ttl_s", 60}};
  auto w = ParseWorkload(doc, "x.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->tenants.size(), 4u);
  EXPECT_EQ(w->tenants[0].id, "heavy");
  EXPECT_EQ(w->tenants[1].id, "light-0");
  EXPECT_EQ(w->tenants[3].id, "light-2");
  EXPECT_EQ(w->tenants[3].prompt_tokens, 10);
  EXPECT_EQ(w->gate_queue_ttl_s, 60);
  EXPECT_EQ(w->total_activities(), 4);
}

TEST(WorkloadScale, BadCountAndCollidingIdsAreNamed) {
  json zero = Tenant("a");
  zero["count"] = 0;
  auto w = ParseWorkload(Doc({zero}), "x.json");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "x.json: tenants[0].count: must be an integer in [1, 1000000], got 0");
  json two = Tenant("a");
  two["count"] = 2;
  w = ParseWorkload(Doc({Tenant("a-1"), two}), "x.json");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), "x.json: tenants[1].id: duplicate tenant id a-1");
  json ttl = Doc({Tenant("a")});
  ttl["gate"] = {{"queue_ttl_s", 0}};
  EXPECT_FALSE(ParseWorkload(ttl, "x.json").ok());
}

TEST(WorkloadScale, ShippedScaleScenarioHas10004Tenants) {
  auto w = LoadWorkload(BP_SOURCE_DIR "/configs/scale/scale.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->tenants.size(), 10004u);
  EXPECT_EQ(w->tenants[3].id, "heavy-3");
  EXPECT_EQ(w->tenants[3].weight, 500);
  EXPECT_EQ(w->tenants[10003].id, "light-9999");
  EXPECT_EQ(w->caps.requests_per_s, 400);
  EXPECT_GT(w->gate_queue_ttl_s, 30);  // above the lights' fair wait (docs/results.md, "Scale")
}

}  // namespace
}  // namespace bp::loadgen
