#include "parasol/collective/schedule.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace parasol::collective {
namespace {

std::vector<uint32_t> IssueDeps(const Program& p, size_t op) {
  return {p.deps.begin() + p.ops[op].dep_begin, p.deps.begin() + p.ops[op].dep_apply};
}
std::vector<uint32_t> ApplyDeps(const Program& p, size_t op) {
  return {p.deps.begin() + p.ops[op].dep_apply, p.deps.begin() + p.ops[op].dep_end};
}

Region Data(uint64_t off, uint64_t n) { return Region{BufferId::kData, off, n}; }

TEST(Schedule, BalancedAndWeightedOffsets) {
  EXPECT_EQ(BalancedOffsets(10, 4), (std::vector<uint64_t>{0, 3, 6, 8, 10}));
  EXPECT_EQ(BalancedOffsets(2, 4), (std::vector<uint64_t>{0, 1, 2, 2, 2}));
  EXPECT_EQ(WeightedOffsets(100, {1, 3}), (std::vector<uint64_t>{0, 25, 100}));
}

TEST(Schedule, DependenciesFollowFromRegions) {
  ProgramBuilder b(0, 3);
  auto r0 = b.RecvReduce(1, Data(0, 10));  // 0
  auto s1 = b.Send(2, Data(5, 10));        // 1: reads what 0 reduced
  auto r2 = b.Recv(2, Data(12, 4));        // 2: overwrites what 1 is still sending
  auto r3 = b.RecvReduce(2, Data(0, 4));   // 3: reduces after 0, after send 1? no overlap with 1
  auto s4 = b.Send(1, Data(100, 5));       // 4: untouched region, no deps
  Program p = std::move(b).Finish();
  EXPECT_TRUE(IssueDeps(p, static_cast<size_t>(r0)).empty());
  EXPECT_EQ(IssueDeps(p, static_cast<size_t>(s1)), std::vector<uint32_t>{0});
  EXPECT_EQ(IssueDeps(p, static_cast<size_t>(r2)), std::vector<uint32_t>{1});
  EXPECT_TRUE(IssueDeps(p, static_cast<size_t>(r3)).empty());  // its receive may start at once
  EXPECT_EQ(ApplyDeps(p, static_cast<size_t>(r3)), std::vector<uint32_t>{0});  // reductions in order
  EXPECT_TRUE(IssueDeps(p, static_cast<size_t>(s4)).empty());
}

TEST(Schedule, ScratchSlotsAreReusedInTurn) {
  ProgramBuilder b(0, 2);
  const int n = ProgramBuilder::kScratchSlotsPerChannel + 2;
  for (int i = 0; i < n; ++i) b.RecvReduce(1, Data(static_cast<uint64_t>(i) * 10, 10));
  Program p = std::move(b).Finish();
  EXPECT_EQ(p.scratch_count, static_cast<uint64_t>(ProgramBuilder::kScratchSlotsPerChannel) * 10);
  EXPECT_EQ(IssueDeps(p, ProgramBuilder::kScratchSlotsPerChannel), std::vector<uint32_t>{0});
  EXPECT_EQ(p.ops[0].aux.offset, p.ops[ProgramBuilder::kScratchSlotsPerChannel].aux.offset);
}

TEST(Schedule, StreamsAreNumberedPerPeerChannelAndDirection) {
  ProgramBuilder b(0, 3);
  b.Send(1, Data(0, 1));                 // 0: stream (1, 0, send) #0
  b.Send(1, Data(1, 1), 1);              // 1: stream (1, 1, send) #0
  b.Recv(1, Data(2, 1));                 // 2: stream (1, 0, recv) #0
  b.Send(1, Data(3, 1));                 // 3: stream (1, 0, send) #1
  b.Send(2, Data(4, 1));                 // 4: stream (2, 0, send) #0
  EXPECT_EQ(b.Send(1, Data(5, 0)), -1);  // empty: not emitted
  Program p = std::move(b).Finish();
  EXPECT_EQ(p.queue_prev, (std::vector<int32_t>{-1, -1, -1, 0, -1}));
  EXPECT_EQ(p.ops[3].stream_pos, 1);
  EXPECT_EQ(p.ops[4].stream_pos, 0);
  EXPECT_EQ(p.SentBytes(4), 16u);
}

}  // namespace
}  // namespace parasol::collective
