// bpctl status as text: the scripts' rounding noise is shown as the integer it
// stands for, while --json (the model) keeps the exact values.
#include <gtest/gtest.h>

#include <string>

#include "bp/bpctl/status_view.h"

namespace bp::test {
namespace {

using bpctl::StatusJson;
using bpctl::StatusText;

TEST(BpctlStatusText, RoundingNoiseIsShownAsTheInteger) {
  GateState state;  // as state.lua answers it
  state.configured = true;
  state.caps.requests_per_s = 10;
  state.caps.burst_s = 1;
  state.omega = {1};
  state.has_bucket_state = true;
  state.l1_requests = -2.8e-14;  // refills of an emptied bucket
  state.l1_requests_now = -2.8e-14;
  state.l1_requests_capacity = 10;
  state.learned_requests_per_s = 10;
  state.server_time_ms = 1'000;
  state.l1_at_ms = 1'000;
  state.virtual_time = 0.3;
  state.class_requests = {3};
  state.class_tokens = {0};
  GateQueueState q;
  q.tenant = "acme";
  q.priority = 1;
  q.weight = 1;
  q.tag = 0.1 + 0.2;  // 0.30000000000000004: a lag of 5.55e-17
  q.lag = q.tag - state.virtual_time;
  q.backlogged = true;
  q.admits = 3;
  state.queues = {q};
  const auto s = StatusJson("t", state);
  // The model is exact.
  EXPECT_EQ(s["l1"]["requests"]["level"].get<double>(), -2.8e-14);
  EXPECT_EQ(s["queues"][0]["lag"].get<double>(), (0.1 + 0.2) - 0.3);
  ASSERT_NE(s["queues"][0]["lag"].get<double>(), 0);
  const std::string text = StatusText(s);
  EXPECT_NE(text.find("L1 requests  0 / 10, refill 10/s\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("e-1"), std::string::npos) << text;  // no 7.1e-15, -2.8e-14
  EXPECT_EQ(text.find(" -0"), std::string::npos) << text;  // no -0 either
  // The queue row: tag 0.3, lag 0.
  EXPECT_NE(text.find("  1     acme    1       0.3  0    yes"), std::string::npos) << text;
  // Values not near an integer keep their 6 significant digits.
  state.l1_requests_now = 2.5e-7;
  EXPECT_NE(StatusText(StatusJson("t", state)).find("L1 requests  2.5e-07 / 10"),
            std::string::npos);
}

}  // namespace
}  // namespace bp::test
