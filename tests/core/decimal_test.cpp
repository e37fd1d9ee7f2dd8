// bp::ParseDecimal / ParseDecimalInt (bp/decimal.h): the whole text as plain
// decimal digits; every strtod extension is refused.
#include "bp/decimal.h"

#include <gtest/gtest.h>

namespace bp {
namespace {

TEST(Decimal, ParsesPlainDecimalNumbers) {
  EXPECT_EQ(ParseDecimal("0"), 0.0);
  EXPECT_EQ(ParseDecimal("16"), 16.0);
  EXPECT_EQ(ParseDecimal("0.25"), 0.25);
  EXPECT_EQ(ParseDecimal("644.5"), 644.5);
  EXPECT_EQ(ParseDecimal("5."), 5.0);
  EXPECT_EQ(ParseDecimal(".5"), 0.5);
  EXPECT_EQ(ParseDecimal("007"), 7.0);
}

TEST(Decimal, RefusesWhatStrtodWouldTake) {
  for (const char* t : {"", ".", "0x10", "0X1F90", "-1", "+1", "1e3", "1E-2", "inf", "nan",
                        "infinity", "60abc", " 1", "1 ", "1.2.3", "1,5", "١"}) {
    EXPECT_FALSE(ParseDecimal(t).has_value()) << t;
  }
  EXPECT_FALSE(ParseDecimal(std::string(65, '1')).has_value());  // over 64 characters
  EXPECT_TRUE(ParseDecimal(std::string(64, '1')).has_value());
}

TEST(Decimal, IntegersAreDigitsOnly) {
  EXPECT_EQ(ParseDecimalInt("0"), 0);
  EXPECT_EQ(ParseDecimalInt("8080"), 8080);
  EXPECT_EQ(ParseDecimalInt("999999999999999999"), 999999999999999999LL);  // 18 digits
  for (const char* t : {"", "1.0", "8080.", "0x1F90", "+1", "-1", "1e3", " 1", "60abc",
                        "1000000000000000000"}) {  // the last has 19 digits
    EXPECT_FALSE(ParseDecimalInt(t).has_value()) << t;
  }
}

}  // namespace
}  // namespace bp
