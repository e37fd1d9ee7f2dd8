// The one workload literal loadgen's tests start from: each test changes
// only the fields it is about (doc["slots"] = 2, ...) and builds it, so a
// new required workload field is added here once.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "bp/loadgen/workload.h"

namespace bp::loadgen::testing {

// One tenant "t1" (priority 1, concurrency 1, one workflow of one activity,
// 10 prompt tokens, max_tokens 5) on one worker slot, no dispatch latency,
// a 60 s run cap, and an upstream of 60 requests per 1 s fixed window.
inline nlohmann::json OneTenantWorkloadDoc(const std::string& name) {
  return {{"name", name},
          {"slots", 1},
          {"run_length_cap_s", 60},
          {"dispatch_latency_ms", 0},
          {"tenants",
           {{{"id", "t1"},
             {"priority", 1},
             {"concurrency", 1},
             {"workflows", 1},
             {"activities_per_workflow", 1},
             {"prompt_tokens", 10},
             {"max_tokens", 5}}}},
          {"upstream",
           {{"limits",
             {{{"dimension", "requests"},
               {"algorithm", "fixed_window"},
               {"limit", 60},
               {"window_s", 1}}}}}}};
}

// The workload `doc` describes; a test failure (and an empty workload) when
// it does not parse.
inline Workload BuildWorkload(const nlohmann::json& doc) {
  auto w = ParseWorkload(doc, doc.value("name", "test"));
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : Workload{};
}

}  // namespace bp::loadgen::testing
