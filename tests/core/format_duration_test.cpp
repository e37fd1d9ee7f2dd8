// bp::FormatDuration (bp/decimal.h): one unit, chosen at twice the unit below,
// with one decimal (whole seconds below two minutes).
#include <gtest/gtest.h>

#include <cmath>

#include "bp/decimal.h"

namespace bp {
namespace {

TEST(FormatDuration, SecondsBelowTwoMinutes) {
  EXPECT_EQ(FormatDuration(0), "0 s");
  EXPECT_EQ(FormatDuration(12.4), "12 s");
  EXPECT_EQ(FormatDuration(119.4), "119 s");
  EXPECT_EQ(FormatDuration(-3), "0 s");  // a clock behind: no negative ages
  EXPECT_EQ(FormatDuration(std::nan("")), "0 s");
}

TEST(FormatDuration, EachUnitFromTwiceTheUnitBelow) {
  EXPECT_EQ(FormatDuration(120), "2.0 min");
  EXPECT_EQ(FormatDuration(210), "3.5 min");
  EXPECT_EQ(FormatDuration(3600), "60.0 min");  // "1.0 h" would hide up to 6 min
  EXPECT_EQ(FormatDuration(7199), "120.0 min");
  EXPECT_EQ(FormatDuration(7200), "2.0 h");
  EXPECT_EQ(FormatDuration(47.5 * 3600), "47.5 h");
  EXPECT_EQ(FormatDuration(2 * 86400), "2.0 days");
  EXPECT_EQ(FormatDuration(4.1 * 86400), "4.1 days");
  EXPECT_EQ(FormatDuration(2 * 365.25 * 86400), "2.0 years");
  EXPECT_EQ(FormatDuration(55.9 * 365.25 * 86400), "55.9 years");
}

}  // namespace
}  // namespace bp
