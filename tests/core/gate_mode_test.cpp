// The gate's mode names (gate.h): one table read by the scripts' ARGV, the
// workload files and bpctl, so a name round-trips and nothing else parses.
#include <gtest/gtest.h>

#include <string>

#include "bp/gate.h"

namespace bp {
namespace {

TEST(GateMode, NamesRoundTrip) {
  EXPECT_STREQ(GateModeName(GateMode::kEstimate), "estimate");
  EXPECT_STREQ(GateModeName(GateMode::kReconcile), "reconcile");
  EXPECT_STREQ(GateModeName(GateMode::kReservation), "reservation");
  for (GateMode m : {GateMode::kEstimate, GateMode::kReconcile, GateMode::kReservation}) {
    EXPECT_EQ(ParseGateMode(GateModeName(m)), m);
    // The message list names every mode.
    EXPECT_NE(std::string(kGateModeNames).find(GateModeName(m)), std::string::npos);
  }
}

TEST(GateMode, OtherTextIsNoMode) {
  for (const char* t : {"", "eager", "Reconcile", " reconcile", "reconcile ", "reserve"}) {
    EXPECT_FALSE(ParseGateMode(t).has_value()) << t;
  }
}

}  // namespace
}  // namespace bp
