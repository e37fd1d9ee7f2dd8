// The runner's refusals: each bad input fails with a clear Status before any
// traffic is sent.
#include <gtest/gtest.h>

#include "bp/loadgen/runner.h"
#include "support/valkey_server.h"

namespace bp::loadgen {
namespace {

Workload Tiny() {
  nlohmann::json doc = {{"name", "tiny"},
                        {"slots", 1},
                        {"run_length_cap_s", 5},
                        {"tenants",
                         {{{"id", "t"},
                           {"priority", 1},
                           {"concurrency", 1},
                           {"workflows", 1},
                           {"prompt_tokens", 10},
                           {"max_tokens", 5}}}},
                        {"upstream",
                         {{"limits",
                           {{{"dimension", "requests"},
                             {"algorithm", "fixed_window"},
                             {"limit", 60},
                             {"window_s", 1.0}}}}}}};
  return *ParseWorkload(doc, "tiny");
}

TEST(EngineRunner, UnknownConfigurationIsInvalid) {
  RunOptions o;
  o.configuration = "fifo";
  auto r = RunOnce(Tiny(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unknown configuration \"fifo\""), std::string::npos);
}

TEST(EngineRunner, BadUpstreamUrlIsInvalid) {
  RunOptions o;
  o.upstream_url = "http://127.0.0.1";
  EXPECT_EQ(RunOnce(Tiny(), o).status().code(), StatusCode::kInvalidArgument);
}

TEST(EngineRunner, SilentMockapiIsUnavailable) {
  RunOptions o;
  o.upstream_url = "http://127.0.0.1:" + std::to_string(bp::test::FreeLoopbackPort());
  auto r = RunOnce(Tiny(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("PUT /admin/config"), std::string::npos);
}

TEST(EngineRunner, BpWithoutValkeyIsUnavailableNotFailOpen) {
  RunOptions o;
  o.configuration = "bp";
  o.valkey_url = "redis://127.0.0.1:" + std::to_string(bp::test::FreeLoopbackPort());
  auto r = RunOnce(Tiny(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace bp::loadgen
