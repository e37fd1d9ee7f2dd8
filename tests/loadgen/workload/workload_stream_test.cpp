// The streaming fields of a tenant (workload.h TenantSpec stream_share,
// cancel_share, cancel_after_events): what they become, and bad values
// refused with the file and field.
#include <gtest/gtest.h>

#include "bp/loadgen/workload.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

json Doc(json extra) {
  json tenant = {{"id", "a"},      {"priority", 1},       {"concurrency", 1},
                 {"workflows", 1}, {"prompt_tokens", 10}, {"max_tokens", 5}};
  tenant.update(extra);
  return {{"name", "w"},
          {"slots", 4},
          {"run_length_cap_s", 60},
          {"tenants", {tenant}},
          {"upstream", {{"limits", {{{"dimension", "requests"}, {"limit", 60}, {"window_s", 60}}}},
                        {"stream_disconnect", "full"}}}};
}

std::string Error(const json& extra) {
  auto w = ParseWorkload(Doc(extra), "w.json");
  return w.ok() ? "" : w.status().message();
}

TEST(WorkloadStream, FieldsBecomeSharesAndCut) {
  auto w = ParseWorkload(Doc({{"stream", true}}), "w.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->tenants[0].stream_share, 1);
  EXPECT_EQ(w->tenants[0].cancel_share, 0);
  w = ParseWorkload(Doc({{"stream_share", 0.25}, {"cancel_share", 0.5}, {"cancel_after_events", 3}}),
                    "w.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->tenants[0].stream_share, 0.25);
  EXPECT_EQ(w->tenants[0].cancel_share, 0.5);
  EXPECT_EQ(w->tenants[0].cancel_after_events, 3);
  w = ParseWorkload(Doc(json::object()), "w.json");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->tenants[0].stream_share, 0);  // plain calls by default
}

TEST(WorkloadStream, BadValuesNameTheField) {
  EXPECT_EQ(Error({{"stream", "yes"}}),
            "w.json: tenants[0].stream: must be true or false, got \"yes\"");
  EXPECT_EQ(Error({{"stream", true}, {"stream_share", 0.5}}),
            "w.json: tenants[0].stream: give stream or stream_share, not both");
  EXPECT_EQ(Error({{"stream_share", 1.5}}),
            "w.json: tenants[0].stream_share: must be a number in [0, 1], got 1.5");
  EXPECT_EQ(Error({{"cancel_share", 0.5}}),
            "w.json: tenants[0].cancel_share: cancels streamed calls only; set stream or "
            "stream_share too");
  EXPECT_EQ(Error({{"stream", true}, {"cancel_after_events", 0}}),
            "w.json: tenants[0].cancel_after_events: must be an integer in [1, 1000000], got 0");
}

}  // namespace
}  // namespace bp::loadgen
