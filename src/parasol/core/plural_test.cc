#include "parasol/core/plural.h"

#include <gtest/gtest.h>

namespace parasol {
namespace {

TEST(Count, SingularForOneAndPluralOtherwise) {
  EXPECT_EQ(Count(1, "rank"), "1 rank");
  EXPECT_EQ(Count(0, "rank"), "0 ranks");
  EXPECT_EQ(Count(2, "GPU"), "2 GPUs");
  EXPECT_EQ(Count(1, "process"), "1 process");
  EXPECT_EQ(Count(4, "process"), "4 processes");
  EXPECT_EQ(Count(3, "batch"), "3 batches");
  EXPECT_EQ(Count(2, "matrix", "matrices"), "2 matrices");
}

}  // namespace
}  // namespace parasol
