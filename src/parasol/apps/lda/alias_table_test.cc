#include "parasol/apps/lda/alias_table.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "parasol/core/rng.h"

namespace parasol::apps::lda {
namespace {

// The distribution a table stands for, read off its entries: entry i is picked with probability
// 1/n, then keeps its topic with probability threshold_i, else gives its alias.
std::map<uint32_t, double> Implied(const AliasEntry* table, uint32_t n) {
  std::map<uint32_t, double> p;
  for (uint32_t i = 0; i < n; ++i) {
    const double keep = std::min(1.0, static_cast<double>(table[i].threshold));
    p[table[i].topic] += keep / n;
    if (keep < 1) p[table[i].alias] += (1 - keep) / n;
  }
  return p;
}

// Two tables in one arena, one of them very skewed: each entry's split gives back the weights.
TEST(AliasTable, EntriesSplitTheMassAsTheWeights) {
  std::vector<AliasEntry> arena;
  AliasScratch scratch;
  const std::vector<uint32_t> topics_a{3, 7, 11, 40}, topics_b{0, 5, 9, 12, 20, 33, 41};
  const std::vector<double> weights_a{1, 2, 3, 4}, weights_b{1e-4, 5, 0.5, 0.5, 2, 1e-3, 7};
  EXPECT_DOUBLE_EQ(BuildAlias(topics_a, weights_a, arena, scratch), 10.0);
  const double sum_b = BuildAlias(topics_b, weights_b, arena, scratch);
  EXPECT_NEAR(sum_b, 15.0011, 1e-12);
  ASSERT_EQ(arena.size(), topics_a.size() + topics_b.size());
  const auto a = Implied(arena.data(), 4);
  const auto b = Implied(arena.data() + 4, 7);
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < topics_a.size(); ++i) EXPECT_NEAR(a.at(topics_a[i]), weights_a[i] / 10.0, 1e-6);
  for (size_t i = 0; i < topics_b.size(); ++i) EXPECT_NEAR(b.at(topics_b[i]), weights_b[i] / sum_b, 1e-6);
}

TEST(AliasTable, OneTopicIsAlwaysDrawn) {
  std::vector<AliasEntry> arena;
  AliasScratch scratch;
  const std::vector<uint32_t> topics{17};
  const std::vector<double> weights{0.25};
  EXPECT_EQ(BuildAlias(topics, weights, arena, scratch), 0.25);
  for (uint64_t r : {uint64_t{0}, ~uint64_t{0}, uint64_t{0x8000000080000000}})
    EXPECT_EQ(DrawAlias(arena.data(), 1, r), 17u);
}

// A million draws: every topic's frequency within 5 standard deviations of its probability.
TEST(AliasTable, DrawsFollowTheWeights) {
  std::vector<AliasEntry> arena;
  AliasScratch scratch;
  const std::vector<uint32_t> topics{0, 1, 2, 3, 4};
  const std::vector<double> weights{0.05, 0.4, 0.15, 0.3, 0.1};
  BuildAlias(topics, weights, arena, scratch);
  Rng rng(7);
  constexpr int kDraws = 1'000'000;
  std::vector<int> count(5, 0);
  for (int i = 0; i < kDraws; ++i) ++count[DrawAlias(arena.data(), 5, rng.Next())];
  for (size_t k = 0; k < 5; ++k) {
    const double p = weights[k], sd = std::sqrt(p * (1 - p) / kDraws);
    EXPECT_NEAR(static_cast<double>(count[k]) / kDraws, p, 5 * sd) << "topic " << k;
  }
}

}  // namespace
}  // namespace parasol::apps::lda
