// bpctl value parsers (values.h): what is accepted and the message for what
// is not. No server needed.
#include "bp/bpctl/values.h"

#include <gtest/gtest.h>

namespace bp::bpctl {
namespace {

TEST(BpctlValues, PositiveNumbers) {
  EXPECT_EQ(*ParsePositive("60", "--rpm"), 60);
  EXPECT_EQ(*ParsePositive("0.5", "--rpm"), 0.5);
  EXPECT_EQ(*ParsePositive("1000", "--rpm"), 1000);
  EXPECT_EQ(*ParsePositive(".5", "--rpm"), 0.5);
  // The strict decimal parser (bp/decimal.h): no sign, exponent or hex.
  for (const char* bad : {"0", "-1", "-0.5", "abc", "", " 5", "5 ", "5x", "nan", "inf", "-inf",
                          "1e400", "0x", "--5", "0x10", "0x1p3", "1e3", "+5", "1.2.3"}) {
    auto r = ParsePositive(bad, "--rpm");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(),
              std::string("--rpm: must be a positive finite number, got '") + bad + "'");
  }
}

TEST(BpctlValues, NonNegativeNumbers) {
  EXPECT_EQ(*ParseNonNegative("0", "--tpm"), 0);
  EXPECT_EQ(*ParseNonNegative("720000", "--tpm"), 720000);
  EXPECT_FALSE(ParseNonNegative("-1", "--tpm").ok());
  EXPECT_FALSE(ParseNonNegative("nan", "--tpm").ok());
}

TEST(BpctlValues, NumbersInARangeNameIt) {
  EXPECT_EQ(RangeText(Range{0, 1, true, true}), "(0, 1)");
  EXPECT_EQ(RangeText(Range{0, 86'400'000, true}), "(0, 8.64e+07]");
  EXPECT_EQ(RangeText(Range{1e-6, 1e6}), "[1e-06, 1e+06]");
  EXPECT_EQ(*ParseNumberIn("0.5", "--beta", kGateAdaptBetaRange), 0.5);
  EXPECT_EQ(*ParseNumberIn("1000000", "W", Range{kMinGateWeight, kMaxGateWeight}),
            1e6);  // closed end
  EXPECT_EQ(*ParseNumberIn("0.000001", "W", Range{kMinGateWeight, kMaxGateWeight}), 1e-6);
  EXPECT_EQ(*ParseNumberIn("0", "--window-ms", kGateAdaptWindowMsRange), 0);
  for (const char* bad : {"0", "1", "-0.5", "nan", "inf", "", "0.5x", "1e400"}) {
    auto r = ParseNumberIn(bad, "--beta", kGateAdaptBetaRange);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(),
              std::string("--beta: must be a number in (0, 1), got '") + bad + "'");
  }
  // The weight range is the gate's one definition (bp/gate.h).
  EXPECT_EQ(kMinGateWeight, kMinGateWeight);
  EXPECT_EQ(kMaxGateWeight, kMaxGateWeight);
}

TEST(BpctlValues, Integers) {
  EXPECT_EQ(*ParseInteger("3", "--priority", 1, 10), 3);
  EXPECT_EQ(*ParseInteger("0", "--count", 0, 10), 0);
  for (const char* bad : {"0", "11", "1.5", "", "x", "99999999999999999999"}) {
    auto r = ParseInteger(bad, "--priority", 1, 10);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(),
              std::string("--priority: must be an integer in [1, 10], got '") + bad + "'");
  }
}

TEST(BpctlValues, TenantNames) {
  EXPECT_EQ(*ParseTenant("acme-1_b.c", "TENANT"), "acme-1_b.c");
  EXPECT_TRUE(ParseTenant(std::string(128, 'a'), "TENANT").ok());
  for (const std::string& bad : {std::string(), std::string(129, 'a'), std::string("a b"),
                                 std::string("a:b"), std::string("a{b}"), std::string("é")}) {
    auto r = ParseTenant(bad, "TENANT");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(),
              "TENANT: must be 1-128 bytes of [A-Za-z0-9_.-], got '" + bad + "'");
  }
  EXPECT_FALSE(ParseTarget("x}y").ok());
}

TEST(BpctlValues, PriorityWeights) {
  EXPECT_EQ(*ParsePriorityWeights("0.5,0.3,0.2"), (std::vector<double>{0.5, 0.3, 0.2}));
  EXPECT_EQ(*ParsePriorityWeights("1"), (std::vector<double>{1}));
  auto r = ParsePriorityWeights("0.5,-0.3,0.2");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "priority weight omega_2: must be a number in [0.000001, 1000000], got '-0.3'");
  for (const char* bad : {"", ",", "0.5,", ",0.5", "0.5,,0.2", "0.5;0.3", "0.5, 0.3", "inf"}) {
    EXPECT_FALSE(ParsePriorityWeights(bad).ok()) << bad;
  }
  std::string many = "1";
  for (size_t k = 1; k < kMaxGateClasses; ++k) many += ",1";
  EXPECT_TRUE(ParsePriorityWeights(many).ok());
  EXPECT_FALSE(ParsePriorityWeights(many + ",1").ok());
}

TEST(BpctlValues, FormatNumberIsShortAndExact) {
  EXPECT_EQ(FormatNumber(60), "60");
  EXPECT_EQ(FormatNumber(0.5), "0.5");
  EXPECT_EQ(FormatNumber(100.0 / 60), "1.6666666666666667");
  EXPECT_EQ(FormatNumber(0.1 + 0.2), "0.30000000000000004");
}

}  // namespace
}  // namespace bp::bpctl
