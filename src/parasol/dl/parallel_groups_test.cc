#include "parasol/dl/parallel_groups.h"

#include <cstdint>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/collective/collectives.h"
#include "parasol/comm/testing.h"

namespace parasol::dl {
namespace {

using ::testing::HasSubstr;

// The world ranks of a group, as its members see them: each adds its bit.
int64_t Members(comm::Context& group, int world_rank) {
  int64_t bits = int64_t{1} << world_rank, all = 0;
  collective::Allreduce(group, &bits, &all, 1, DType::kInt64);
  return all;
}

int64_t Bits(const std::set<int>& ranks) {
  int64_t bits = 0;
  for (int r : ranks) bits |= int64_t{1} << r;
  return bits;
}

// 8 ranks as T = 2 tensor ranks x D = 4 replicas, experts over P = 2 replicas: every group holds
// the ranks Megatron's layout puts in it (written out here rank by rank, not by the formula).
TEST(ParallelLayout, EightRanksFormTheGroupsOfTheLayout) {
  comm::InProcessWorld world(8);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    ParallelGroups g(ctx, 2, 2);
    const int r = ctx.rank();
    EXPECT_EQ(g.tensor_parallel(), 2);
    EXPECT_EQ(g.data_parallel(), 4);
    EXPECT_EQ(g.expert_parallel(), 2);
    EXPECT_EQ(g.tensor_rank(), r % 2);
    EXPECT_EQ(g.data_rank(), r / 2);
    const bool even = r % 2 == 0;
    const std::set<int> kTensor[4] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
    EXPECT_EQ(Members(g.tensor(), r), Bits(kTensor[r / 2]));
    EXPECT_EQ(Members(g.data(), r), Bits(even ? std::set<int>{0, 2, 4, 6} : std::set<int>{1, 3, 5, 7}));
    // Experts over replicas {0, 1} and {2, 3}; copies of the same experts in replicas {0, 2}, {1, 3}.
    const std::set<int> kExpert[2][2] = {{{0, 2}, {4, 6}}, {{1, 3}, {5, 7}}};
    EXPECT_EQ(Members(g.expert(), r), Bits(kExpert[r % 2][r / 4]));
    const std::set<int> kCopies[2][2] = {{{0, 4}, {2, 6}}, {{1, 5}, {3, 7}}};
    EXPECT_EQ(Members(g.expert_copies(), r), Bits(kCopies[r % 2][(r / 2) % 2]));
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST(ParallelLayout, ARankWithAnotherDegreeIsNamed) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { ParallelGroups groups(ctx, ctx.rank() == 0 ? 2 : 1, 1); });
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_THAT(comm::testing::Message(errors[0]),
              HasSubstr("rank 1 runs tensor parallel 1 and expert parallel 1"));
  EXPECT_THAT(comm::testing::Message(errors[1]),
              HasSubstr("rank 0 runs tensor parallel 2 and expert parallel 1"));
}

TEST(ParallelLayout, DegreesThatDoNotDivideAreRefused) {
  comm::InProcessWorld world(2);
  auto experts =
      comm::testing::RunRanks(world, [&](comm::Context& ctx) { ParallelGroups groups(ctx, 1, 3); });
  EXPECT_THAT(comm::testing::Message(experts[0]), HasSubstr("expert parallel 3 does not divide the 2"));
  auto tensor = comm::testing::RunRanks(world, [&](comm::Context& ctx) { ParallelGroups groups(ctx, 3, 1); });
  EXPECT_THAT(comm::testing::Message(tensor[0]), HasSubstr("tensor parallel 3"));
}

}  // namespace
}  // namespace parasol::dl
