#include "parasol/core/balance.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "parasol/core/rng.h"

namespace parasol {
namespace {

// 5, 3, 3, 2, 1 over two parts, by hand: 5 to part 0; 3 to part 1; 3 to part 1 (3 < 5); 2 to part
// 0 (5 < 6); 1 to part 1 (6 < 7). Loads 7 and 7.
TEST(AssignToParts, HeaviestFirstToTheLeastLoadedPart) {
  const std::vector<uint64_t> weights{5, 3, 3, 2, 1};
  EXPECT_EQ(AssignToParts(weights, 2), (std::vector<uint32_t>{0, 1, 1, 0, 1}));
}

// Equal weights and equal loads go to the lower part: items in order, round robin.
TEST(AssignToParts, TiesGoToTheLowerPart) {
  const std::vector<uint64_t> weights(5, 4);
  EXPECT_EQ(AssignToParts(weights, 2), (std::vector<uint32_t>{0, 1, 0, 1, 0}));
  EXPECT_EQ(AssignToParts(weights, 1), std::vector<uint32_t>(5, 0));
  EXPECT_EQ(AssignToParts({}, 3), std::vector<uint32_t>{});
}

// Zipf-like weights (as a vocabulary's word counts): every part's load within the heaviest item of
// every other part's, and every item in a part.
TEST(AssignToParts, LoadsEndWithinTheHeaviestItem) {
  Rng rng(7);
  std::vector<uint64_t> weights(2000);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 100000 / (i + 1) + rng.Below(50);
  for (uint32_t parts : {2u, 3u, 7u}) {
    const std::vector<uint32_t> part = AssignToParts(weights, parts);
    std::vector<uint64_t> load(parts, 0);
    for (size_t i = 0; i < weights.size(); ++i) {
      ASSERT_LT(part[i], parts);
      load[part[i]] += weights[i];
    }
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*hi - *lo, *std::max_element(weights.begin(), weights.end())) << parts << " parts";
  }
}

// Items of 4, 4, 1, 1, 1, 1, 4 tokens (offsets 0 4 8 9 10 11 12 16): halves of 16 cut before item
// 2, the first whose end passes 8; thirds (5 and 10, rounded down) cut before items 1 and 4.
TEST(CutEvenly, RangesEndWhereTheirShareOfTheWeightIsReached) {
  const std::vector<uint64_t> offsets{0, 4, 8, 9, 10, 11, 12, 16};
  EXPECT_EQ(CutEvenly(offsets, 0, 7, 2), (std::vector<size_t>{0, 2, 7}));
  EXPECT_EQ(CutEvenly(offsets, 0, 7, 3), (std::vector<size_t>{0, 1, 4, 7}));
  EXPECT_EQ(CutEvenly(offsets, 0, 7, 1), (std::vector<size_t>{0, 7}));
  // A share of the items, [2, 6): 4 tokens, halves at 2 tokens each.
  EXPECT_EQ(CutEvenly(offsets, 2, 6, 2), (std::vector<size_t>{2, 4, 6}));
  // More parts than items: empty ranges, boundaries never going back.
  EXPECT_EQ(CutEvenly(offsets, 5, 6, 3), (std::vector<size_t>{5, 5, 5, 6}));
}

}  // namespace
}  // namespace parasol
