// The progress line's text (progress.h): elapsed / expected real time, the
// expectation at the rate so far and never past the cap, totals and per class.
#include "bp/loadgen/progress.h"

#include <gtest/gtest.h>

namespace bp::loadgen {
namespace {

ProgressSnapshot ThreeClasses() {
  ProgressSnapshot s;
  s.label = "cross-priority bp #0";
  s.elapsed_s = 12.7;
  s.cap_s = 120;
  s.speedup = 5;
  s.done = 300;
  s.total = 1000;
  s.busy_slots = 18;
  s.slots = 20;
  s.ok = {0, 100, 90, 80};
  s.throttled = {0, 2, 3, 5};
  s.local = {0, 0, 0, 0};
  return s;
}

TEST(Progress, ElapsedExpectedTotalsAndClasses) {
  // 12.7 s for 300 of 1000 activities -> 42.33 s expected.
  EXPECT_EQ(ProgressLine(ThreeClasses()),
            "cross-priority bp #0 12s / ~42s (cap 120s, paper 63s) done 300/1000 slots 18/20 | "
            "ok 270 429 10 | P1 ok 100 429 2 | P2 ok 90 429 3 | P3 ok 80 429 5");
}

TEST(Progress, NothingDoneYetAndTheCapBounds) {
  ProgressSnapshot s = ThreeClasses();
  s.done = 0;
  EXPECT_EQ(ProgressLine(s).rfind("cross-priority bp #0 12s / ? (cap 120s", 0), 0u);
  s.done = 50;  // at this rate 254 s, past the 120 s cap
  EXPECT_EQ(ProgressLine(s).rfind("cross-priority bp #0 12s / ~120s (cap 120s", 0), 0u);
}

TEST(Progress, OneClassHasNoPerClassPartAndLocal429sShow) {
  ProgressSnapshot s = ThreeClasses();
  s.label = "overload litellm #1";
  s.ok = {0, 40};
  s.throttled = {0, 7};
  s.local = {0, 3};
  EXPECT_EQ(ProgressLine(s),
            "overload litellm #1 12s / ~42s (cap 120s, paper 63s) done 300/1000 slots 18/20 | "
            "ok 40 429 7 local 3");
}

}  // namespace
}  // namespace bp::loadgen
