#include "parasol/core/stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace parasol {
namespace {

TEST(Median, TheMiddleSampleOrTheMeanOfTheTwoMiddleOnes) {
  EXPECT_EQ(Median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(Median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(Median({7.5}), 7.5);
  EXPECT_EQ(Median({}), 0.0);
  EXPECT_EQ(Median({5.0, 5.0, 1.0, 100.0, 5.0}), 5.0) << "one slow sample does not move it";
}

}  // namespace
}  // namespace parasol
