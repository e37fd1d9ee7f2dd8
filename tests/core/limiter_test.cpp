// Limiter primitives on a FakeClock: exact window edges, refill, quantization,
// retry-after values and atomic multi-dimension consume.
#include "bp/limiter.h"

#include <gtest/gtest.h>

namespace bp {
namespace {

constexpr int64_t kS = 1'000'000;  // microseconds per second

LimiterOptions Opt(Dimension d, LimiterAlgorithm a, int64_t limit, double window_s,
                   double quantum_s = 1.0) {
  LimiterOptions o;
  o.dimension = d;
  o.algorithm = a;
  o.limit = limit;
  o.window_s = window_s;
  o.quantum_s = quantum_s;
  return o;
}

std::unique_ptr<Limiter> Make(const LimiterOptions& o) {
  auto l = MakeLimiter(o);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return std::move(*l);
}

TEST(FixedWindow, AlignedToClockAndResetsAtTheEdge) {
  auto l = Make(Opt(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 3, 60));
  const int64_t t = 120 * kS + 59 * kS;  // 1 s before the window [120 s, 180 s) ends
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(l->WaitUs(1, t), 0);
    l->Consume(1, t);  // 3 -> 0 remaining
  }
  EXPECT_EQ(l->Remaining(t), 0);
  EXPECT_EQ(l->WaitUs(1, t), 1 * kS);  // until 180 s
  EXPECT_EQ(l->ResetUs(t), 1 * kS);
  EXPECT_EQ(l->WaitUs(1, 180 * kS - 1), 1);  // last microsecond of the window
  EXPECT_EQ(l->WaitUs(1, 180 * kS), 0);      // new window: 0 -> 3 remaining
  EXPECT_EQ(l->Remaining(180 * kS), 3);
  EXPECT_EQ(l->ResetUs(180 * kS), 0);
}

TEST(FixedWindow, CostFitsOnlyWhenTheWholeCostFits) {
  auto l = Make(Opt(Dimension::kTokens, LimiterAlgorithm::kFixedWindow, 100, 1));
  l->Consume(70, 0);  // 100 -> 30
  EXPECT_EQ(l->WaitUs(30, 250'000), 0);
  EXPECT_EQ(l->WaitUs(31, 250'000), 750'000);
  EXPECT_EQ(l->Remaining(250'000), 30);
}

TEST(SlidingWindow, EntriesExpireOneWindowAfterTheirTime) {
  auto l = Make(Opt(Dimension::kRequests, LimiterAlgorithm::kSlidingWindow, 2, 10));
  l->Consume(1, 1 * kS);
  l->Consume(1, 4 * kS);                    // 2 -> 0 remaining
  EXPECT_EQ(l->WaitUs(1, 5 * kS), 6 * kS);  // first entry leaves at 11 s
  EXPECT_EQ(l->WaitUs(2, 5 * kS), 9 * kS);  // both gone at 14 s
  EXPECT_EQ(l->ResetUs(5 * kS), 9 * kS);
  EXPECT_EQ(l->Remaining(11 * kS - 1), 0);
  EXPECT_EQ(l->Remaining(11 * kS), 1);  // 0 -> 1
  EXPECT_EQ(l->WaitUs(1, 11 * kS), 0);
  EXPECT_EQ(l->Remaining(14 * kS), 2);
}

TEST(SlidingWindow, NoEdgeBurstUnlikeFixedWindow) {
  // 5 calls at 0.9 s; a fixed 1 s window would admit 5 more at 1.0 s.
  auto l = Make(Opt(Dimension::kRequests, LimiterAlgorithm::kSlidingWindow, 5, 1));
  l->Consume(5, 900'000);
  EXPECT_EQ(l->WaitUs(1, 1'000'000), 900'000);  // until 1.9 s
}

TEST(TokenBucket, StartsFullAndRefillsContinuously) {
  // 60 per 60 s: 1 token per second.
  auto l = Make(Opt(Dimension::kRequests, LimiterAlgorithm::kTokenBucket, 60, 60));
  EXPECT_EQ(l->Remaining(0), 60);
  l->Consume(60, 0);  // 60 -> 0
  EXPECT_EQ(l->WaitUs(1, 0), 1 * kS);
  EXPECT_EQ(l->WaitUs(1, 400'000), 600'000);
  EXPECT_EQ(l->Remaining(2'500'000), 2);  // 0 -> 2.5 tokens
  EXPECT_EQ(l->WaitUs(3, 2'500'000), 500'000);
  EXPECT_EQ(l->ResetUs(2'500'000), 57'500'000);
  EXPECT_EQ(l->Remaining(1000 * kS), 60);  // capped at capacity
  EXPECT_EQ(l->ResetUs(1000 * kS), 0);
}

TEST(TokenBucket, FractionalRateRoundsWaitUp) {
  // 3 per 1 s: one token every 333 333.33 us.
  auto l = Make(Opt(Dimension::kTokens, LimiterAlgorithm::kTokenBucket, 3, 1));
  l->Consume(3, 0);
  EXPECT_EQ(l->WaitUs(1, 0), 333'334);
  EXPECT_EQ(l->Remaining(333'333), 0);
  EXPECT_EQ(l->Remaining(333'334), 1);
}

TEST(Quantized, SixHundredPerMinuteIsTenPerSecond) {
  auto l = Make(Opt(Dimension::kRequests, LimiterAlgorithm::kQuantized, 600, 60, 1));
  EXPECT_EQ(l->capacity(), 10);
  l->Consume(10, 5'200'000);  // 10 -> 0 in the quantum [5 s, 6 s)
  EXPECT_EQ(l->WaitUs(1, 5'200'000), 800'000);
  EXPECT_EQ(l->Remaining(6 * kS), 10);
}

TEST(LimiterOptions, BadValuesFailWithTheirMessage) {
  EXPECT_EQ(MakeLimiter(Opt(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 0, 1))
                .status()
                .message(),
            "limit must be >= 1, got 0");
  EXPECT_EQ(MakeLimiter(Opt(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 1, 0))
                .status()
                .message(),
            "window_s must be in [0.000001, 10000000], got 0.000000");
  EXPECT_EQ(MakeLimiter(Opt(Dimension::kRequests, LimiterAlgorithm::kQuantized, 10, 60, 1))
                .status()
                .message(),
            "quantized limit below 1 per quantum: 10 * quantum_s / window_s < 1");
  EXPECT_EQ(MakeLimiter(Opt(Dimension::kRequests, LimiterAlgorithm::kQuantized, 10, 1, 2))
                .status()
                .message(),
            "quantum_s must be in (0, window_s], got 2.000000");
  EXPECT_EQ(ParseDimension("tpm").status().message(),
            "dimension must be requests, tokens, input_tokens or output_tokens, got \"tpm\"");
  EXPECT_EQ(*ParseLimiterAlgorithm("token_bucket"), LimiterAlgorithm::kTokenBucket);
  FakeClock clock;
  auto set = LimiterSet::Create({Opt(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 1, 1),
                                 Opt(Dimension::kTokens, LimiterAlgorithm::kFixedWindow, -5, 1)},
                                clock);
  EXPECT_EQ(set.status().message(), "limits[1]: limit must be >= 1, got -5");
}

class LimiterSetTest : public ::testing::Test {
 protected:
  // The paper's multi-resource upstream: 60 req/s + 12 000 tok/s, fixed window.
  void SetUp() override {
    auto set =
        LimiterSet::Create({Opt(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 60, 1),
                            Opt(Dimension::kTokens, LimiterAlgorithm::kFixedWindow, 12000, 1)},
                           clock_);
    ASSERT_TRUE(set.ok());
    set_ = std::move(*set);
  }
  static DimensionCosts Cost(int64_t requests, int64_t tokens) { return {requests, tokens, 0, 0}; }

  FakeClock clock_{1000 * kS + 250'000};  // 0.25 s into a window
  std::unique_ptr<LimiterSet> set_;
};

TEST_F(LimiterSetTest, RejectedCallConsumesNothing) {
  auto d = set_->Acquire(Cost(1, 11000), nullptr);  // tokens 12000 -> 1000
  ASSERT_TRUE(d.admitted);
  EXPECT_EQ(d.states[0].remaining, 59);
  EXPECT_EQ(d.states[1].remaining, 1000);
  d = set_->Acquire(Cost(1, 1001), nullptr);  // tokens bind; requests untouched
  EXPECT_FALSE(d.admitted);
  EXPECT_FALSE(d.never_fits);
  EXPECT_EQ(d.binding, 1);
  EXPECT_EQ(d.used, 11000);
  EXPECT_EQ(d.retry_after_us, 750'000);
  EXPECT_EQ(CeilMs(d.retry_after_us), 750);
  EXPECT_EQ(d.states[0].remaining, 59);
  EXPECT_EQ(d.states[1].remaining, 1000);
  EXPECT_EQ(d.states[1].reset_us, 750'000);
  d = set_->Acquire(Cost(1, 1000), nullptr);  // exactly fits: 1000 -> 0
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(d.states[0].remaining, 58);
  EXPECT_EQ(d.states[1].remaining, 0);
}

TEST_F(LimiterSetTest, CountRejectedChargesOnlyTheCharge) {
  set_->Acquire(Cost(1, 12000), nullptr);
  const DimensionCosts charge = Cost(1, 0);
  auto d = set_->Acquire(Cost(1, 10), &charge);  // rejected, still 59 -> 58 requests
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.states[0].remaining, 58);
  EXPECT_EQ(d.states[1].remaining, 0);
}

TEST_F(LimiterSetTest, BindingIsTheLongestWait) {
  auto set = LimiterSet::Create({Opt(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 1, 1),
                                 Opt(Dimension::kTokens, LimiterAlgorithm::kTokenBucket, 100, 10)},
                                clock_);  // 10 tok/s
  ASSERT_TRUE(set.ok());
  (*set)->Acquire(Cost(1, 100), nullptr);  // both empty
  auto d = (*set)->Acquire(Cost(1, 20), nullptr);
  EXPECT_EQ(d.binding, 1);  // tokens: 2 s > requests: 0.75 s
  EXPECT_EQ(d.retry_after_us, 2 * kS);
  clock_.AdvanceUs(2 * kS);
  EXPECT_TRUE((*set)->Acquire(Cost(1, 20), nullptr).admitted);
}

TEST_F(LimiterSetTest, CostAboveCapacityNeverFits) {
  auto d = set_->Acquire(Cost(1, 12001), nullptr);
  EXPECT_FALSE(d.admitted);
  EXPECT_TRUE(d.never_fits);
  EXPECT_EQ(d.binding, 1);
  EXPECT_EQ(d.retry_after_us, 0);
  EXPECT_EQ(d.states[0].remaining, 60);  // nothing consumed
}

TEST_F(LimiterSetTest, WindowEdgeRestoresAllDimensions) {
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(set_->Acquire(Cost(1, 1), nullptr).admitted);
  auto d = set_->Acquire(Cost(1, 1), nullptr);
  EXPECT_EQ(d.binding, 0);
  EXPECT_EQ(d.retry_after_us, 750'000);
  clock_.AdvanceUs(750'000);  // 1001.0 s: new window
  d = set_->Acquire(Cost(1, 1), nullptr);
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(d.states[0].remaining, 59);
  EXPECT_EQ(d.states[1].remaining, 11999);
}

}  // namespace
}  // namespace bp
