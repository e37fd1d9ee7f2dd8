// The runner's refusals: each bad input fails with a clear Status before any
// traffic is sent.
#include <gtest/gtest.h>

#include "bp/loadgen/runner.h"
#include "support/valkey_server.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

Workload Tiny() {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("tiny");
  doc.erase("dispatch_latency_ms");  // the engine's default
  doc["run_length_cap_s"] = 5;
  return testing::BuildWorkload(doc);
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
