#include "parasol/dl/dynamic/schedule.h"

#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/testing.h"
#include "parasol/dl/dynamic/sst_treebank.h"

namespace parasol::dl::dynamic {
namespace {

// "(1 (2 a) (3 (2 b) (4 c)))": leaves a, b, c; (b c) at height 1, the root at height 2.
TEST(Schedule, LevelsGroupVerticesByHeightAcrossGraphs) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  const std::string path = WriteTestFile("sched.txt", "(1 (2 a) (3 (2 b) (4 c)))\n(0 (1 a) (2 d))\n");
  const Treebank t = ReadTreebank(path, vocab, true);
  ASSERT_EQ(t.trees.size(), 2u);
  EXPECT_EQ(t.sentences[0], "a b c");
  const std::vector<const ExampleGraph*> batch = {&t.trees[0], &t.trees[1]};
  const Schedule s = MakeSchedule(batch, Batching::kBatched);
  EXPECT_EQ(s.vertices, 8);  // 5 + 3
  ASSERT_EQ(s.levels.size(), 3u);
  EXPECT_TRUE(s.levels[0].leaves);
  EXPECT_EQ(s.levels[0].rows.numel(), 5);  // a b c, a d
  EXPECT_EQ(s.levels[1].rows.numel(), 2);  // (b c), the second root
  EXPECT_EQ(s.levels[2].rows.numel(), 1);  // the first root
  EXPECT_EQ(s.input_rows.numel(), 5);
  EXPECT_EQ(s.roots[0].item<int64_t>(), 4);
  EXPECT_EQ(s.roots[1].item<int64_t>(), 7);
  // A leaf's absent children are the zero row.
  EXPECT_EQ(s.levels[0].children[0].item<int64_t>(), 8);
  EXPECT_EQ(MakeSchedule(batch, Batching::kPerNode).levels.size(), 8u);
}

}  // namespace
}  // namespace parasol::dl::dynamic
