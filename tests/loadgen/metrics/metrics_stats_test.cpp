// Jain's index, type-7 percentiles and the Student-t interval on exact inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "bp/loadgen/metrics.h"

namespace bp::loadgen {
namespace {

TEST(JainIndexTest, EqualValuesGiveOne) {
  const std::vector<double> x = {1, 1, 1, 1};
  EXPECT_DOUBLE_EQ(JainIndex(x), 1.0);
}

TEST(JainIndexTest, OneQueueTakesAllGivesOneOverN) {
  const std::vector<double> x = {1, 0, 0, 0};
  EXPECT_DOUBLE_EQ(JainIndex(x), 0.25);
}

TEST(JainIndexTest, KnownMixedValues) {
  // (1+2+3)^2 / (3 * (1+4+9)) = 36 / 42
  const std::vector<double> x = {1, 2, 3};
  EXPECT_DOUBLE_EQ(JainIndex(x), 36.0 / 42.0);
}

TEST(JainIndexTest, PaperNaiveTokenBoundIsAbout0888) {
  // Flat service, ideal 0.5/0.5/0.3/0.3/0.2/0.2: r = 1/w. Paper Table III: 0.888.
  const std::vector<double> r = {2, 2, 1 / 0.3, 1 / 0.3, 5, 5};
  EXPECT_NEAR(JainIndex(r), 0.888, 0.001);
}

TEST(JainIndexTest, EmptyAndAllZeroGiveOne) {
  EXPECT_DOUBLE_EQ(JainIndex(std::vector<double>{}), 1.0);
  EXPECT_DOUBLE_EQ(JainIndex(std::vector<double>{0, 0}), 1.0);
}

TEST(PercentileTest, LinearInterpolationBetweenClosestRanks) {
  const std::vector<double> v = {40, 10, 30, 20};  // sorted 10 20 30 40
  EXPECT_DOUBLE_EQ(Percentile(v, 0.0), 10);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.5), 25);     // h = 1.5
  EXPECT_DOUBLE_EQ(Percentile(v, 0.95), 38.5);  // h = 2.85
  EXPECT_DOUBLE_EQ(Percentile(v, 1.0), 40);
  EXPECT_DOUBLE_EQ(Percentile({7}, 0.99), 7);
  EXPECT_DOUBLE_EQ(Percentile({}, 0.5), 0);
}

TEST(PercentileTest, HundredValues) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(Percentile(v, 0.99), 99.01);  // h = 98.01
  EXPECT_DOUBLE_EQ(Percentile(v, 0.95), 95.05);  // h = 94.05
}

TEST(StudentTTest, TableValues) {
  EXPECT_DOUBLE_EQ(StudentT975(1), 12.7062);
  EXPECT_DOUBLE_EQ(StudentT975(4), 2.7764);
  EXPECT_DOUBLE_EQ(StudentT975(30), 2.0423);
  EXPECT_DOUBLE_EQ(StudentT975(60), 2.0003);
  EXPECT_DOUBLE_EQ(StudentT975(0), 0.0);
  EXPECT_NEAR(StudentT975(100000), 1.96, 0.001);
  EXPECT_GT(StudentT975(50), StudentT975(60));
  EXPECT_LT(StudentT975(50), StudentT975(40));
}

TEST(MeanCiTest, FiveRepeats) {
  // mean 3, sum of squares 10, s = sqrt(10/4), half = 2.7764 * s / sqrt(5)
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const MeanCi ci = MeanCi95(x);
  EXPECT_EQ(ci.n, 5);
  EXPECT_DOUBLE_EQ(ci.mean, 3.0);
  EXPECT_DOUBLE_EQ(ci.stdev, std::sqrt(2.5));
  EXPECT_NEAR(ci.half_width, 2.7764 * std::sqrt(2.5) / std::sqrt(5.0), 1e-12);
  EXPECT_NEAR(ci.half_width, 1.96321, 1e-5);  // 2.7764 * 1.58114 / 2.23607
}

TEST(MeanCiTest, OneSampleHasNoInterval) {
  const std::vector<double> x = {4.5};
  const MeanCi ci = MeanCi95(x);
  EXPECT_EQ(ci.n, 1);
  EXPECT_DOUBLE_EQ(ci.mean, 4.5);
  EXPECT_DOUBLE_EQ(ci.half_width, 0.0);
}

}  // namespace
}  // namespace bp::loadgen
