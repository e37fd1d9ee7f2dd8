// Limiter::Refund and LimiterSet::Refund (a stream cut short gives back the
// tokens it never generated): exact levels per algorithm, and nothing given
// back where the charge no longer counts.
#include <gtest/gtest.h>

#include "bp/clock.h"
#include "bp/limiter.h"

namespace bp {
namespace {

constexpr int64_t kS = 1'000'000;

std::unique_ptr<Limiter> Make(LimiterAlgorithm a, int64_t limit, double window_s,
                              double quantum_s = 1.0) {
  LimiterOptions o;
  o.dimension = Dimension::kTokens;
  o.algorithm = a;
  o.limit = limit;
  o.window_s = window_s;
  o.quantum_s = quantum_s;
  auto l = MakeLimiter(o);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return std::move(*l);
}

TEST(LimiterRefund, FixedWindowOnlyWhileTheWindowIsCurrent) {
  auto l = Make(LimiterAlgorithm::kFixedWindow, 100, 1);
  l->Consume(70, 100'000);            // 100 -> 30
  l->Refund(20, 100'000, 500'000);    // 30 -> 50
  EXPECT_EQ(l->Remaining(500'000), 50);
  l->Refund(500, 100'000, 600'000);   // never below nothing used: 50 -> 100
  EXPECT_EQ(l->Remaining(600'000), 100);
  l->Consume(40, 900'000);            // 100 -> 60
  l->Refund(40, 900'000, 1 * kS);     // the next window: nothing to give back
  EXPECT_EQ(l->Remaining(1 * kS), 100);
  l->Consume(10, 1 * kS);             // 100 -> 90
  l->Refund(10, 900'000, 1 * kS + 1); // charged in the last window: 90 stays
  EXPECT_EQ(l->Remaining(1 * kS + 1), 90);
}

TEST(LimiterRefund, SlidingWindowFromTheEntryOfThatTime) {
  auto l = Make(LimiterAlgorithm::kSlidingWindow, 100, 1);
  l->Consume(30, 0);            // 100 -> 70
  l->Consume(50, 200'000);      // 70 -> 20
  l->Refund(20, 0, 300'000);    // the entry at 0: 30 -> 10; 20 -> 40
  EXPECT_EQ(l->Remaining(300'000), 40);
  l->Refund(99, 0, 300'000);    // at most the entry: 10 -> 0; 40 -> 50
  EXPECT_EQ(l->Remaining(300'000), 50);
  l->Refund(10, 100'000, 300'000);  // no entry at 100 ms: 50 stays
  EXPECT_EQ(l->Remaining(300'000), 50);
  l->Refund(50, 200'000, 1'200'000);  // expired at 1.2 s: nothing to give back
  EXPECT_EQ(l->Remaining(1'200'000), 100);
}

TEST(LimiterRefund, TokenBucketUpToFull) {
  auto l = Make(LimiterAlgorithm::kTokenBucket, 100, 1);
  EXPECT_EQ(l->Remaining(0), 100);  // starts full
  l->Consume(80, 0);                // 100 -> 20
  l->Refund(30, 0, 0);              // 20 -> 50
  EXPECT_EQ(l->Remaining(0), 50);
  l->Refund(90, 0, 100'000);        // 50 + 10 refilled + 90, capped: 100
  EXPECT_EQ(l->Remaining(100'000), 100);
}

TEST(LimiterRefund, QuantizedInItsQuantum) {
  auto l = Make(LimiterAlgorithm::kQuantized, 600, 60, 1);  // 10 per 1 s quantum
  l->Consume(8, 0);                 // 10 -> 2
  l->Refund(5, 0, 500'000);         // 2 -> 7
  EXPECT_EQ(l->Remaining(500'000), 7);
  l->Refund(3, 0, 1 * kS);          // the next quantum: 10 stays
  EXPECT_EQ(l->Remaining(1 * kS), 10);
}

TEST(LimiterRefund, SetGivesBackPerDimension) {
  FakeClock clock(10 * kS);
  LimiterOptions req, tok;
  req.dimension = Dimension::kRequests;
  req.limit = 10;
  req.window_s = 60;
  tok.dimension = Dimension::kTokens;
  tok.limit = 1000;
  tok.window_s = 60;
  auto set = LimiterSet::Create({req, tok}, clock);
  ASSERT_TRUE(set.ok());
  ASSERT_TRUE((*set)->Acquire({1, 300, 0, 0}, nullptr).admitted);  // 10 -> 9, 1000 -> 700
  (*set)->Refund({0, 120, 0, 120}, 10 * kS);                        // 700 -> 820
  const auto states = (*set)->Peek();
  EXPECT_EQ(states[0].remaining, 9);  // requests are not given back
  EXPECT_EQ(states[1].remaining, 820);
}

}  // namespace
}  // namespace bp
