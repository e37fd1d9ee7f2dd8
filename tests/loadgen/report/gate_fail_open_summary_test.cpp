// The closing line of a bp run names why its gate calls failed open
// (GateFailOpenSummary): the causes counted by the gate threads, and the
// re-seeds of a target whose store lost its state.
#include <gtest/gtest.h>

#include "bp/loadgen/bp_configuration.h"

namespace bp::loadgen {
namespace {

TEST(GateFailOpenSummary, NamesTheCauses) {
  RunRecords r;
  EXPECT_EQ(GateFailOpenSummary(r, "x bp #0"), "");  // nothing to say
  r.gate_fail_opens = 7743;
  r.gate_fail_opens_unconfigured = 7743;
  EXPECT_EQ(GateFailOpenSummary(r, "x bp #0"),
            "x bp #0: 7743 gate calls failed open, ungated (target not configured 7743); the "
            "circuit breakers opened 0 times");
  r.gate_fail_opens = 20;
  r.gate_fail_opens_unconfigured = 0;
  r.gate_fail_opens_unreachable = 12;
  r.gate_fail_opens_timed_out = 5;
  r.gate_fail_opens_server_error = 3;
  r.gate_breaker_opens = 4;
  r.gate_reseeds = 1;
  EXPECT_EQ(GateFailOpenSummary(r, "x bp #0"),
            "x bp #0: 20 gate calls failed open, ungated (unreachable 12, timed out 5, server "
            "error 3); the circuit breakers opened 4 times; the target was re-seeded 1 times "
            "from the declared configuration (the store lost its state)");
}

TEST(GateFailOpenSummary, ReseedsAloneAndRecordsWithoutCauses) {
  RunRecords r;
  r.gate_reseeds = 2;
  EXPECT_EQ(GateFailOpenSummary(r, "y"),
            "y: the target was re-seeded 2 times from the declared configuration (the store "
            "lost its state)");
  RunRecords old;  // records written before fail-opens were counted by cause
  old.gate_fail_opens = 3;
  EXPECT_EQ(GateFailOpenSummary(old, "z"),
            "z: 3 gate calls failed open, ungated (causes not recorded); the circuit breakers "
            "opened 0 times");
}

TEST(GateFailOpenSummary, FailedReleasesAloneAndAfterFailOpens) {
  RunRecords r;
  r.gate_release_errors = 9;
  EXPECT_EQ(GateFailOpenSummary(r, "w"),
            "w: 9 releases failed (their debits stand until the tickets expire)");
  r.gate_fail_opens = 2;
  r.gate_fail_opens_timed_out = 2;
  EXPECT_EQ(GateFailOpenSummary(r, "w"),
            "w: 2 gate calls failed open, ungated (timed out 2); the circuit breakers opened 0 "
            "times; 9 releases failed (their debits stand until the tickets expire)");
}

}  // namespace
}  // namespace bp::loadgen
