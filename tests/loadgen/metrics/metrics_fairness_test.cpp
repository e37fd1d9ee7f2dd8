// WFQ and weighted-DRF ideal shares (water-filling, paper equation 1).
#include <gtest/gtest.h>

#include <vector>

#include "bp/loadgen/metrics.h"

namespace bp::loadgen {
namespace {

TEST(WfqSharesTest, CrossPriorityTwoTenantsPerClass) {
  // omega 0.5/0.3/0.2, w_t = 1, cap 60: sum of weights 2 -> 30 req/s per unit.
  const std::vector<double> w = {0.5, 0.5, 0.3, 0.3, 0.2, 0.2};
  const std::vector<double> s = WfqShares(60, w);
  const std::vector<double> want = {15, 15, 9, 9, 6, 6};
  ASSERT_EQ(s.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(s[i], want[i], 1e-9) << i;
}

TEST(WfqSharesTest, DemandCapGivesTheRestToOthers) {
  // Equal weights on 60: 20 each, but queue 0 can use only 5 -> 5 / 27.5 / 27.5.
  const std::vector<double> w = {1, 1, 1};
  const std::vector<double> caps = {5, 1e9, 1e9};
  const std::vector<double> s = WfqShares(60, w, caps);
  EXPECT_NEAR(s[0], 5, 1e-9);
  EXPECT_NEAR(s[1], 27.5, 1e-9);
  EXPECT_NEAR(s[2], 27.5, 1e-9);
}

TEST(WfqSharesTest, CascadingDemandCaps) {
  // Weights 1/1/2 on 100: 25/25/50. Queue 2 caps at 30 -> 35/35/30;
  // queue 0 caps at 20 -> 20/50/30.
  const std::vector<double> w = {1, 1, 2};
  const std::vector<double> caps = {20, 1e9, 30};
  const std::vector<double> s = WfqShares(100, w, caps);
  EXPECT_NEAR(s[0], 20, 1e-9);
  EXPECT_NEAR(s[1], 50, 1e-9);
  EXPECT_NEAR(s[2], 30, 1e-9);
}

TEST(WfqSharesTest, AllQueuesCappedBelowCapacityLeaveItIdle) {
  const std::vector<double> w = {1, 1};
  const std::vector<double> caps = {10, 5};
  const std::vector<double> s = WfqShares(60, w, caps);
  EXPECT_NEAR(s[0], 10, 1e-9);
  EXPECT_NEAR(s[1], 5, 1e-9);
}

TEST(WfqSharesTest, ZeroWeightGetsNothing) {
  const std::vector<double> w = {0, 1};
  const std::vector<double> s = WfqShares(60, w);
  EXPECT_DOUBLE_EQ(s[0], 0);
  EXPECT_NEAR(s[1], 60, 1e-9);
}

TEST(WeightedDrfTest, TokenHeavyAndRequestHeavyPerEquation1) {
  // Mixed-dominant: caps 60 req/s and 12000 tok/s; one 800-token tenant
  // (sigma = 800/12000 = 1/15, tokens dominant) and two 80-token tenants
  // (sigma = 1/60, requests dominant). Equation 1:
  //   D_req = 1/(1/15) + 2 * 1/(1/60) = 135       -> 60 / 135 = 4/9
  //   D_tok = 800*15 + 2 * 80*60      = 21600     -> 12000 / 21600 = 5/9
  // X* = 4/9 (requests bind): heavy 15 X* = 20/3 req/s, light 60 X* = 80/3.
  const std::vector<double> caps = {60, 12000};
  std::vector<FairShareQueue> q(3);
  q[0].cost = {1, 800};
  q[1].cost = {1, 80};
  q[2].cost = {1, 80};
  const FairShares s = WeightedDrfShares(caps, q);
  EXPECT_NEAR(s.rate[0], 20.0 / 3, 1e-9);
  EXPECT_NEAR(s.rate[1], 80.0 / 3, 1e-9);
  EXPECT_NEAR(s.rate[2], 80.0 / 3, 1e-9);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(s.dominant_share[i], 4.0 / 9, 1e-9) << i;  // equalized
    EXPECT_EQ(s.binding[i], 0) << i;                       // requests bound
  }
  // Request cap is used fully: 20/3 + 2 * 80/3 = 60.
  EXPECT_NEAR(s.rate[0] + s.rate[1] + s.rate[2], 60, 1e-9);
}

TEST(WeightedDrfTest, TokenBoundWithPriorityWeights) {
  // Six tenants with 400 + 100 tokens per call, weights 0.5/0.5/0.3/0.3/0.2/0.2.
  // sigma = 500/12000 = 1/24; D_tok = 2 * 500 * 24 = 24000 -> X* = 0.5;
  // rate = w * 0.5 * 24 = 12 w: 6 6 3.6 3.6 2.4 2.4 req/s (24 req/s = 12000 tok/s).
  const std::vector<double> caps = {60, 12000};
  const std::vector<double> w = {0.5, 0.5, 0.3, 0.3, 0.2, 0.2};
  std::vector<FairShareQueue> q(6);
  for (size_t i = 0; i < 6; ++i) q[i] = {w[i], {1, 500}};
  const FairShares s = WeightedDrfShares(caps, q);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(s.rate[i], 12 * w[i], 1e-9) << i;
    EXPECT_EQ(s.binding[i], 1) << i;  // tokens bound
  }
}

TEST(WeightedDrfTest, QueueWithoutTokensIsFrozenByTheRequestCap) {
  // Caps 100 req/s and 100 tok/s. Queue 0 costs {1, 10} (sigma 0.1, tokens
  // dominant), queue 1 costs {1, 0} (sigma 0.01).
  //   D_req = 1/0.1 + 1/0.01 = 110 -> X_req = 100/110;  D_tok = 10/0.1 = 100 -> 1.
  // Requests bind at X = 10/11: x0 = X/0.1 = 100/11, x1 = X/0.01 = 1000/11.
  const std::vector<double> caps = {100, 100};
  std::vector<FairShareQueue> q(2);
  q[0].cost = {1, 10};
  q[1].cost = {1, 0};
  const FairShares s = WeightedDrfShares(caps, q);
  EXPECT_NEAR(s.rate[0], 100.0 / 11, 1e-9);
  EXPECT_NEAR(s.rate[1], 1000.0 / 11, 1e-9);
}

TEST(WeightedDrfTest, DemandCapOnTheHeavyTenantLiftsTheLightOnes) {
  // As the mixed-dominant case, but the heavy tenant can use only 3 req/s.
  // It freezes at 3 (2400 tok/s); the light ones share 57 req/s: 28.5 each.
  const std::vector<double> caps = {60, 12000};
  std::vector<FairShareQueue> q(3);
  q[0].cost = {1, 800};
  q[0].demand_cap = 3;
  q[1].cost = {1, 80};
  q[2].cost = {1, 80};
  const FairShares s = WeightedDrfShares(caps, q);
  EXPECT_NEAR(s.rate[0], 3, 1e-9);
  EXPECT_EQ(s.binding[0], -1);
  EXPECT_NEAR(s.rate[1], 28.5, 1e-9);
  EXPECT_NEAR(s.rate[2], 28.5, 1e-9);
}

// The hierarchical ideal (the gate's default rule): classes by omega, then
// tenants by w_t inside a class. Four classes omega 0.4/0.3/0.2/0.1 whose
// tenants' weights sum to 3, 4, 3, 4, cap 60: classes 24/18/12/6 whatever
// their summed weights (flat: 21.8/21.8/10.9/7.3).
TEST(HierarchicalSharesTest, ClassesGetTheirOmegaWhateverTheirTenants) {
  const double caps[1] = {60};
  const double omega[4] = {0.4, 0.3, 0.2, 0.1};
  const double w[8] = {1, 2, 1, 3, 1, 2, 1, 3};
  std::vector<FairShareQueue> qs(8);
  for (size_t i = 0; i < 8; ++i) {
    qs[i].weight = w[i], qs[i].group = static_cast<int>(i / 2) + 1, qs[i].cost = {1.0};
    qs[i].group_weight = omega[i / 2];
  }
  const std::vector<double> want = {8, 16, 4.5, 13.5, 4, 8, 1.5, 4.5};
  const FairShares s = WeightedDrfShares(caps, qs);
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(s.rate[i], want[i], 1e-9) << i;
}

// A tenant below its share (demand cap) leaves the rest to its own class; a
// class with no demand leaves its part to the others by omega.
TEST(HierarchicalSharesTest, UnusedShareStaysInTheClassThenGoesByOmega) {
  const double caps[1] = {60};
  std::vector<FairShareQueue> qs(4);
  // class 1 (omega 0.5): a (w 1, at most 2 req/s) and b (w 2); class 2
  // (omega 0.3): c; class 3 (omega 0.2): d, at most 0 demand -> no share.
  const int group[4] = {1, 1, 2, 3};
  const double omega[4] = {0.5, 0.5, 0.3, 0.2}, w[4] = {1, 2, 1, 1};
  for (size_t i = 0; i < 4; ++i) {
    qs[i].weight = w[i], qs[i].group = group[i], qs[i].group_weight = omega[i];
    qs[i].cost = {1.0};
  }
  qs[0].demand_cap = 2;
  qs[3].demand_cap = 0;
  const FairShares s = WeightedDrfShares(caps, qs);
  // Classes 1 and 2 share 60 by 0.5 : 0.3 -> 37.5 and 22.5; a takes 2, b
  // the rest of class 1.
  EXPECT_NEAR(s.rate[0], 2, 1e-9);
  EXPECT_NEAR(s.rate[1], 35.5, 1e-9);
  EXPECT_NEAR(s.rate[2], 22.5, 1e-9);
  EXPECT_EQ(s.rate[3], 0);
}

}  // namespace
}  // namespace bp::loadgen
