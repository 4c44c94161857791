// Broadcast, reduce, reduce-scatter, allgather, alltoall and barrier for rank counts 1-8 and sizes
// that exercise both the small-message (tree) and the large-message (pipelined) schedules.
#include "parasol/collective/collectives.h"

#include <gtest/gtest.h>

#include <vector>

#include "parasol/collective/test_util.h"
#include "parasol/comm/testing.h"

namespace parasol::collective {
namespace {

using comm::InProcessWorld;
using testing::ExactInput;
using testing::Reference;

constexpr size_t kCollectiveCounts[] = {0, 1, 7, 20011};  // 20011 float64: past the tree threshold

class RankCount : public ::testing::TestWithParam<int> {};

TEST_P(RankCount, BroadcastFromEveryRoot) {
  int n = GetParam();
  InProcessWorld world(n);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    for (size_t count : kCollectiveCounts) {
      for (int root = 0; root < n; ++root) {
        auto want = ExactInput(DType::kFloat64, ReduceOp::kSum, root, count, 3);
        std::vector<std::byte> buf = ctx.rank() == root ? want : std::vector<std::byte>(want.size());
        BroadcastOptions o;
        o.root = root;
        o.segment_bytes = 16384;
        Broadcast(ctx, buf.data(), count, DType::kFloat64, o);
        ASSERT_EQ(buf, want) << "root " << root << " count " << count;
      }
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST_P(RankCount, ReduceToEveryRootWithEveryOp) {
  int n = GetParam();
  InProcessWorld world(n);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    for (size_t count : kCollectiveCounts) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProduct, ReduceOp::kMin, ReduceOp::kMax}) {
        for (int root = 0; root < n; ++root) {
          std::vector<std::vector<std::byte>> inputs;
          for (int r = 0; r < n; ++r) inputs.push_back(ExactInput(DType::kInt64, op, r, count, 5));
          auto in = inputs[static_cast<size_t>(ctx.rank())];
          std::vector<std::byte> out(in.size());
          ReduceOptions o;
          o.root = root;
          o.op = op;
          bool in_place = count % 2 == 1 && ctx.rank() == root;
          Reduce(ctx, in.data(), in_place ? in.data() : out.data(), count, DType::kInt64, o);
          if (ctx.rank() == root)
            ASSERT_EQ(in_place ? in : out, Reference(DType::kInt64, op, inputs));
          else
            ASSERT_EQ(in, inputs[static_cast<size_t>(ctx.rank())]) << "non-root input modified";
        }
      }
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST_P(RankCount, ReduceScatterLeavesEachRankItsBlock) {
  int n = GetParam();
  InProcessWorld world(n);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{3}, size_t{7}, size_t{20011}}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
        std::vector<std::vector<std::byte>> inputs;
        for (int r = 0; r < n; ++r) inputs.push_back(ExactInput(DType::kFloat32, op, r, count, 9));
        auto want = Reference(DType::kFloat32, op, inputs);
        auto [begin, end] = BlockRange(count, n, ctx.rank());
        std::vector<std::byte> expect(want.begin() + static_cast<long>(begin * 4),
                                      want.begin() + static_cast<long>(end * 4));
        ReduceScatterOptions o;
        o.op = op;
        std::vector<std::byte> out((end - begin) * 4);
        ReduceScatter(ctx, inputs[static_cast<size_t>(ctx.rank())].data(), out.data(), count, DType::kFloat32,
                      o);
        ASSERT_EQ(out, expect) << "count " << count;
        auto buf = inputs[static_cast<size_t>(ctx.rank())];
        ReduceScatter(ctx, buf.data(), buf.data(), count, DType::kFloat32, o);  // in place
        ASSERT_EQ(std::vector<std::byte>(buf.begin() + static_cast<long>(begin * 4),
                                         buf.begin() + static_cast<long>(end * 4)),
                  expect);
      }
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST_P(RankCount, AllgatherCollectsEveryContribution) {
  int n = GetParam();
  InProcessWorld world(n);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    for (size_t count : kCollectiveCounts) {
      std::vector<std::byte> want;
      for (int r = 0; r < n; ++r) {
        auto part = ExactInput(DType::kInt32, ReduceOp::kSum, r, count, 11);
        want.insert(want.end(), part.begin(), part.end());
      }
      auto mine = ExactInput(DType::kInt32, ReduceOp::kSum, ctx.rank(), count, 11);
      std::vector<std::byte> out(want.size());
      Allgather(ctx, mine.data(), out.data(), count, DType::kInt32);
      ASSERT_EQ(out, want) << "count " << count;
      std::vector<std::byte> inplace(want.size());
      std::copy(mine.begin(), mine.end(),
                inplace.begin() + static_cast<long>(static_cast<size_t>(ctx.rank()) * mine.size()));
      Allgather(ctx, inplace.data(), inplace.data(), count, DType::kInt32);
      ASSERT_EQ(inplace, want);
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

// Uneven blocks (count not a multiple of the ranks, and fewer elements than ranks) come back whole
// and in order; a block of the wrong size is refused on every rank before any exchange.
TEST_P(RankCount, AllgatherBlocksReassemblesAVector) {
  int n = GetParam();
  InProcessWorld world(n);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{3}, size_t{1001}}) {
      const auto [b, e] = BlockRange(count, n, ctx.rank());
      std::vector<double> mine;
      for (size_t i = b; i < e; ++i) mine.push_back(0.5 * static_cast<double>(i) - 7);
      const std::vector<double> whole = AllgatherBlocks<double>(ctx, mine, count);
      ASSERT_EQ(whole.size(), count);
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(whole[i], 0.5 * static_cast<double>(i) - 7) << i;
    }
    std::vector<double> wrong(BlockRange(10, n, ctx.rank()).second - BlockRange(10, n, ctx.rank()).first + 1);
    EXPECT_THROW(AllgatherBlocks<double>(ctx, wrong, 10), InvalidArgumentError);
  });
  comm::testing::ExpectNoErrors(errors);
}

// Blocks of different lengths, some empty, some past a segment, arrive whole and in rank order,
// out of place and in place.
TEST_P(RankCount, AllgathervCollectsBlocksOfAnyLength) {
  int n = GetParam();
  InProcessWorld world(n);
  auto value = [](int r, size_t j) { return static_cast<int64_t>(r) * 1000003 + static_cast<int64_t>(j); };
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      std::vector<uint64_t> counts(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        const auto ur = static_cast<uint64_t>(r);
        // None, a few, rising, one big.
        const uint64_t lengths[] = {0, ur % 3, 5 + 7 * ur, ur == 1 ? 9000 : ur};
        counts[ur] = lengths[pattern];
      }
      std::vector<int64_t> want;
      for (int r = 0; r < n; ++r)
        for (size_t j = 0; j < counts[static_cast<size_t>(r)]; ++j) want.push_back(value(r, j));
      std::vector<int64_t> mine;
      const uint64_t own = counts[static_cast<size_t>(ctx.rank())];
      for (size_t j = 0; j < own; ++j) mine.push_back(value(ctx.rank(), j));
      AllgatherOptions o;
      o.segment_bytes = 4096;  // 9,000 int64 take several segments
      std::vector<int64_t> out(want.size(), -1);
      Allgatherv(ctx, mine.data(), out.data(), counts, DType::kInt64, o);
      ASSERT_EQ(out, want) << "pattern " << pattern;
      std::vector<int64_t> inplace(want.size(), -1);
      size_t offset = 0;
      for (int r = 0; r < ctx.rank(); ++r) offset += counts[static_cast<size_t>(r)];
      std::copy(mine.begin(), mine.end(), inplace.begin() + static_cast<ptrdiff_t>(offset));
      Allgatherv(ctx, inplace.data(), inplace.data(), counts, DType::kInt64, o);
      ASSERT_EQ(inplace, want) << "pattern " << pattern << ", in place";
      std::vector<uint64_t> got_counts;
      ASSERT_EQ(AllgatherVariable<int64_t>(ctx, mine, {}, &got_counts), want) << "pattern " << pattern;
      ASSERT_EQ(got_counts, counts);
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

// Every pair of ranks exchanges its own number of elements (none for some pairs, thousands for
// one): each block arrives whole, from the right rank, at its offset.
TEST_P(RankCount, AlltoallvDeliversBlocksOfAnyLength) {
  int n = GetParam();
  InProcessWorld world(n);
  // Elements rank s sends rank d in pattern p, and the value of the j-th.
  auto count = [](int p, int s, int d) -> uint64_t {
    const uint64_t lengths[] = {0, static_cast<uint64_t>((s + 2 * d) % 3),
                                static_cast<uint64_t>(1 + s * 5 + d),
                                s == 0 && d == 1 ? 7000u : static_cast<uint64_t>(d)};
    return lengths[p];
  };
  auto value = [](int s, int d, size_t j) { return s * 1000003.0 + d * 1009.0 + static_cast<double>(j); };
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    const int me = ctx.rank();
    for (int p = 0; p < 4; ++p) {
      std::vector<uint64_t> send_counts, recv_counts;
      std::vector<double> in, want;
      for (int d = 0; d < n; ++d) {
        send_counts.push_back(count(p, me, d));
        for (size_t j = 0; j < send_counts.back(); ++j) in.push_back(value(me, d, j));
      }
      for (int s = 0; s < n; ++s) {
        recv_counts.push_back(count(p, s, me));
        for (size_t j = 0; j < recv_counts.back(); ++j) want.push_back(value(s, me, j));
      }
      std::vector<double> out(want.size(), -1);
      Alltoallv(ctx, in.data(), send_counts, out.data(), recv_counts, DType::kFloat64);
      ASSERT_EQ(out, want) << "pattern " << p;
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST_P(RankCount, AlltoallTransposesBlocks) {
  int n = GetParam();
  InProcessWorld world(n);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{3001}}) {
      // Element j of block d sent by rank s is s * 1e6 + d * 1e4 + j.
      auto value = [&](int s, int d, size_t j) {
        return static_cast<int64_t>(s) * 1000000 + d * 10000 + static_cast<int64_t>(j);
      };
      std::vector<int64_t> in(static_cast<size_t>(n) * count), out(in.size());
      for (int d = 0; d < n; ++d)
        for (size_t j = 0; j < count; ++j) in[static_cast<size_t>(d) * count + j] = value(ctx.rank(), d, j);
      std::vector<int64_t> want(in.size());
      for (int s = 0; s < n; ++s)
        for (size_t j = 0; j < count; ++j) want[static_cast<size_t>(s) * count + j] = value(s, ctx.rank(), j);
      Alltoall(ctx, in.data(), out.data(), count, DType::kInt64);
      ASSERT_EQ(out, want);
      Alltoall(ctx, in.data(), in.data(), count, DType::kInt64);
      ASSERT_EQ(in, want);
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

TEST_P(RankCount, BarrierWaitsForEveryRank) {
  int n = GetParam();
  InProcessWorld world(n);
  std::atomic<int> arrived{0};
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    // The last rank comes once every other one waits inside the barrier: a barrier that let them
    // through early would have them see fewer than n arrivals.
    if (ctx.rank() == n - 1) {
      comm::testing::WaitUntil([&] { return world.waiting() == n - 1; }, "the other ranks in the barrier");
    }
    arrived.fetch_add(1);
    Barrier(ctx);
    EXPECT_EQ(arrived.load(), n);
  });
  comm::testing::ExpectNoErrors(errors);
}

INSTANTIATE_TEST_SUITE_P(Ranks, RankCount, ::testing::Values(1, 2, 3, 4, 5, 8));

}  // namespace
}  // namespace parasol::collective
