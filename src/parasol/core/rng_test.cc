#include "parasol/core/rng.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace parasol {
namespace {

TEST(Rng, TheSameSeedDrawsTheSameNumbers) {
  Rng a(7, 1, 2, 3), b(7, 1, 2, 3), c(7, 1, 2, 4);
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differ += x != c.Next();
  }
  EXPECT_GT(differ, 95);
}

TEST(Rng, BelowStaysInRangeAndCoversIt) {
  Rng rng(3);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const uint32_t x = rng.Below(10);
    ASSERT_LT(x, 10u);
    ++counts[x];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);  // 5 standard deviations
}

// A shuffle is a permutation, and each of the 24 orders of 4 items comes about equally often.
TEST(Rng, ShuffleDrawsEveryOrderAlike) {
  Rng rng(11);
  std::map<std::vector<int>, int> orders;
  for (int i = 0; i < 48000; ++i) {
    std::vector<int> items{0, 1, 2, 3};
    Shuffle(std::span<int>(items), rng);
    ++orders[items];
  }
  ASSERT_EQ(orders.size(), 24u);
  for (const auto& [order, count] : orders) EXPECT_NEAR(count, 2000, 215);  // 5 standard deviations
  std::vector<int> many(1000);
  std::iota(many.begin(), many.end(), 0);
  Shuffle(std::span<int>(many), rng);
  EXPECT_FALSE(std::is_sorted(many.begin(), many.end()));
  std::sort(many.begin(), many.end());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(many[static_cast<size_t>(i)], i);
}

}  // namespace
}  // namespace parasol
