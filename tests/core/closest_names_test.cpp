// EditDistance and ClosestNames (bp/closest_names.h): exact distances, and
// the hint list bpctl and loadgen print for a mistyped name.
#include "bp/closest_names.h"

#include <gtest/gtest.h>

namespace bp {
namespace {

TEST(EditDistance, CountsSingleByteEdits) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("", "ab"), 2u);
  EXPECT_EQ(EditDistance("prod", "prod"), 0u);
  EXPECT_EQ(EditDistance("prod", "prdo"), 2u);   // two substitutions
  EXPECT_EQ(EditDistance("prod", "produ"), 1u);  // one insertion
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(ClosestNames, NearestFirstWithinTheLimit) {
  const std::vector<std::string> names = {"staging", "prod", "prod-eu", "default", "prod2"};
  // "prdo": prod and prod2 at 2 (insert o after r; then drop or replace the
  // last o), prod-eu at 4 (limit max(2, 4/3) = 2).
  EXPECT_EQ(ClosestNames("prdo", names), (std::vector<std::string>{"prod", "prod2"}));
  // "prod-e": prod-eu 1, prod2 2, prod 2 -> ties in the order given.
  EXPECT_EQ(ClosestNames("prod-e", names), (std::vector<std::string>{"prod-eu", "prod", "prod2"}));
  EXPECT_EQ(ClosestNames("prod-e", names, 1), (std::vector<std::string>{"prod-eu"}));
  EXPECT_TRUE(ClosestNames("zzzzzz", names).empty());
  EXPECT_TRUE(ClosestNames("prod", {"prod"}).empty());  // the word itself is no hint
}

}  // namespace
}  // namespace bp
