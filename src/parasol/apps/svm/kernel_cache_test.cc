#include "parasol/apps/svm/kernel_cache.h"

#include <gtest/gtest.h>

namespace parasol::apps::svm {
namespace {

TEST(KernelCacheTest, EvictsTheLeastRecentlyUsedColumn) {
  KernelCache cache(10, 4, 3 * 4 * sizeof(float));  // room for 3 columns of 4
  ASSERT_EQ(cache.capacity(), 3u);
  for (uint32_t key : {1u, 2u, 3u}) cache.Insert(key, true)[0] = static_cast<float>(key);
  bool full = false;
  ASSERT_NE(cache.Find(1, &full), nullptr);  // 1 is now the most recent; 2 the least
  EXPECT_TRUE(full);
  cache.Insert(4, true)[0] = 4;
  EXPECT_EQ(cache.Find(2, &full), nullptr);
  EXPECT_EQ(cache.Find(1, &full)[0], 1);
  EXPECT_EQ(cache.Find(3, &full)[0], 3);
  EXPECT_EQ(cache.Find(4, &full)[0], 4);
}

TEST(KernelCacheTest, PartialColumnsAreNotFullAndAreDropped) {
  KernelCache cache(10, 4, 1 << 20);
  cache.Insert(1, false)[0] = 1;
  cache.Insert(2, true)[0] = 2;
  bool full = true;
  EXPECT_NE(cache.Find(1, &full), nullptr);
  EXPECT_FALSE(full);
  cache.DropPartial();
  EXPECT_EQ(cache.Find(1, &full), nullptr);
  EXPECT_EQ(cache.Find(2, &full)[0], 2);
  // The dropped column's memory is reused, and the full one is not taken for it.
  cache.Insert(3, false)[0] = 3;
  EXPECT_EQ(cache.Find(2, &full)[0], 2);
  EXPECT_EQ(cache.Find(3, &full)[0], 3);
  // A partial column completed by its user is kept by DropPartial.
  cache.MarkFull(3);
  cache.DropPartial();
  EXPECT_EQ(cache.Find(3, &full)[0], 3);
  EXPECT_TRUE(full);
}

TEST(KernelCacheTest, ATinyBudgetStillHoldsTwoColumns) {
  KernelCache cache(10, 1000, 1);
  EXPECT_EQ(cache.capacity(), 2u);
  float* a = cache.Insert(5, true);
  a[999] = 5;
  cache.Insert(6, true)[0] = 6;
  bool full = false;
  EXPECT_EQ(cache.Find(5, &full)[999], 5);
  cache.Insert(7, true);  // takes 6's slot: 5 was used last
  EXPECT_EQ(cache.Find(6, &full), nullptr);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
}

}  // namespace
}  // namespace parasol::apps::svm
