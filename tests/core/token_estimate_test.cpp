#include "bp/token_estimate.h"

#include <gtest/gtest.h>

#include "bp/clock.h"
#include "bp/status.h"
#include "support/valkey_server.h"

namespace bp {
namespace {

TEST(TokenEstimate, CeilOfBytesOverFour) {
  EXPECT_EQ(EstimateTokens(""), 0);
  EXPECT_EQ(EstimateTokens("a"), 1);
  EXPECT_EQ(EstimateTokens("abcd"), 1);
  EXPECT_EQ(EstimateTokens("abcde"), 2);
  EXPECT_EQ(EstimateTokens(std::string(1600, 'x')), 400);
}

TEST(TokenEstimate, TextOfTokensRoundTrips) {
  for (int64_t n : {0, 1, 80, 100, 400, 800}) {
    EXPECT_EQ(EstimateTokens(TextOfTokens(n)), n);
  }
}

TEST(FakeClock, AdvancesExactly) {
  FakeClock clock(1'000'000);
  clock.AdvanceMs(250);  // 1.000 s -> 1.250 s
  EXPECT_EQ(clock.NowUs(), 1'250'000);
}

TEST(Status, CarriesCodeAndMessage) {
  Status s = Status::InvalidArgument("weight must be positive, got -1");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.ToString(), "InvalidArgument: weight must be positive, got -1");
  Result<int> r = Status::NotFound("no such tenant");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(ValkeyServerFixture, StartsStopsAndRestartsOnSamePort) {
  test::ValkeyServer server;
  ASSERT_TRUE(server.running()) << server.error();
  const int port = server.port();
  EXPECT_TRUE(test::WaitForPort(port, 1000));
  server.Stop();
  EXPECT_FALSE(server.running());
  ASSERT_TRUE(server.Start()) << server.error();
  EXPECT_EQ(server.port(), port);
}

}  // namespace
}  // namespace bp
