#include "parasol/data/design_generator.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol::data {
namespace {

// Features of one block share a factor: their correlation is the one asked for; across blocks 0.
TEST(DesignGenerator, BlocksHaveTheAskedCorrelationAndTheTruthIsSparse) {
  Design g = GenerateDesign({.rows = 4000,
                             .cols = 40,
                             .block_size = 4,
                             .correlation = 0.8,
                             .blocks_per_row = 10,
                             .true_nonzeros = 5,
                             .noise = 0.1,
                             .seed = 3});
  ASSERT_EQ(g.data.rows(), 4000u);
  EXPECT_EQ(g.data.nonzeros(), 4000u * 40u);
  EXPECT_EQ(std::count_if(g.truth.begin(), g.truth.end(), [](double w) { return w != 0; }), 5);
  auto column = [&](uint32_t j) {
    std::vector<double> c;
    for (size_t r = 0; r < g.data.rows(); ++r) c.push_back(g.data.row_values(r)[j]);
    return c;
  };
  auto corr = [](const std::vector<double>& a, const std::vector<double>& b) {
    double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
    const double n = static_cast<double>(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      sa += a[i], sb += b[i], sab += a[i] * b[i], saa += a[i] * a[i], sbb += b[i] * b[i];
    return (sab - sa * sb / n) / std::sqrt((saa - sa * sa / n) * (sbb - sb * sb / n));
  };
  EXPECT_NEAR(corr(column(0), column(3)), 0.8, 0.03);
  EXPECT_NEAR(corr(column(8), column(9)), 0.8, 0.03);
  EXPECT_NEAR(corr(column(0), column(4)), 0.0, 0.05);
  // The labels follow the truth: y - x.w is the noise.
  double sq = 0;
  for (size_t r = 0; r < g.data.rows(); ++r) {
    double dot = 0;
    for (size_t k = 0; k < g.data.row_indices(r).size(); ++k)
      dot += g.data.row_values(r)[k] * g.truth[g.data.row_indices(r)[k]];
    sq += (g.data.labels[r] - dot) * (g.data.labels[r] - dot);
  }
  EXPECT_NEAR(std::sqrt(sq / 4000), 0.1, 0.01);
  EXPECT_THROW(GenerateDesign({.rows = 10, .cols = 10, .block_size = 3}), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::data
