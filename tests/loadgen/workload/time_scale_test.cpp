// TimeScale (time_scale.h): the one speedup validation and the paper/real
// conversions, exact.
#include "bp/loadgen/time_scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "bp/loadgen/runner.h"

namespace bp::loadgen {
namespace {

TEST(TimeScale, OfAcceptsOnlyFiniteSpeedupsUpToOneThousand) {
  for (double ok : {1e-9, 0.5, 1.0, 5.0, 1000.0}) {
    auto s = TimeScale::Of(ok);
    ASSERT_TRUE(s.ok()) << ok;
    EXPECT_EQ(s->speedup(), ok);
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {0.0, -1.0, 1000.5, inf, -inf, std::nan("")}) {
    auto s = TimeScale::Of(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.status().message().rfind("speedup must be in (0, 1000], got ", 0), 0u)
        << s.status().message();
  }
  EXPECT_EQ(TimeScale::Of(0).status().message(), "speedup must be in (0, 1000], got 0");
  // RunOptions are checked with the same rule (one definition).
  RunOptions o;
  o.speedup = 1000.5;
  EXPECT_EQ(ValidateRunOptions(o).message(), "--speedup must be in (0, 1000], got 1000.5");
}

TEST(TimeScale, ConversionsAtSpeedupFour) {
  const TimeScale s = *TimeScale::Of(4);
  EXPECT_EQ(s.ToReal(1000), 250);    // 1 paper s = 250 real ms
  EXPECT_EQ(s.ToPaper(250), 1000);   // and back
  EXPECT_EQ(s.RateToReal(60), 240);  // 60 paper req/s = 240 real req/s
  EXPECT_EQ(s.PaperMsToRealUs(1000), 250'000);
  EXPECT_EQ(s.PaperMsToRealUs(-5), 0);  // a negative delay fires at once
  EXPECT_EQ(s.PaperMsToRealUs(std::nan("")), 0);
  EXPECT_EQ(s.PaperMsToRealUs(1e30), 1'000'000'000'000'000);  // clamped to 1e15 us
  EXPECT_EQ(s.RealUsToPaperMs(250'000), 1000);
  EXPECT_EQ(s.RealUsToPaperS(250'000), 1);
}

TEST(TimeScale, DefaultAndRecordedFallBackToOne) {
  EXPECT_EQ(TimeScale().speedup(), 1);
  EXPECT_EQ(TimeScale::Recorded(2.5).speedup(), 2.5);
  EXPECT_EQ(TimeScale::Recorded(0).speedup(), 1);  // hand-made records without a speedup
  EXPECT_EQ(TimeScale::Recorded(-3).speedup(), 1);
}

}  // namespace
}  // namespace bp::loadgen
