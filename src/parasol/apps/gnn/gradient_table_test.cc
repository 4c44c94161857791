#include "parasol/apps/gnn/gradient_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"

namespace parasol::apps::gnn {
namespace {

using namespace std::chrono_literals;

// Push k of rank r carries (k + 1) * (r + 1) + entry / 8 in each entry; the sum handed back at push
// k is exactly that of push k - S over all ranks, never an older one (the bound) nor one mixing in
// a newer push, while the ranks drift apart by random delays as far as the bound lets them. Two
// rows per push (the gradient is wider than a row).
TEST(GradientTableTest, HandsBackTheSumOfExactlySPushesAgo) {
  const int ranks = 3;
  const size_t size = 5000;
  for (uint32_t staleness : {0u, 1u, 3u}) {
    comm::InProcessWorld world(ranks);
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      GradientTable table(ctx, size, 2, staleness, 10000ms);
      std::mt19937 rng(static_cast<unsigned>(ctx.rank() * 7 + staleness));
      std::vector<float> grad(size), sum;
      std::vector<double> extra_sum;
      const auto value = [](uint64_t k, int r, size_t i) {
        return static_cast<float>((k + 1) * static_cast<uint64_t>(r + 1)) + static_cast<float>(i % 64) / 8;
      };
      for (uint64_t k = 0; k < 12; ++k) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
        for (size_t i = 0; i < size; ++i) grad[i] = value(k, ctx.rank(), i);
        const double extra[2] = {static_cast<double>(k), 0.5 * ctx.rank()};
        const bool got = table.Push(grad, extra, &sum, &extra_sum);
        ASSERT_EQ(got, k >= staleness) << "push " << k << ", S = " << staleness;
        if (!got) continue;
        ASSERT_EQ(sum.size(), size);
        for (size_t i = 0; i < size; ++i) {
          float want = 0;
          for (int r = 0; r < ranks; ++r) want += value(k - staleness, r, i);
          ASSERT_EQ(sum[i], want) << "push " << k << ", entry " << i << ", S = " << staleness;
        }
        ASSERT_EQ(extra_sum, (std::vector<double>{static_cast<double>((k - staleness) * ranks), 0.5 * 3}));
      }
      table.Finish();
    }));
  }
}

// A rank that stops pushing: the others' wait for its rows ends at the deadline with an error,
// not a hang.
TEST(GradientTableTest, ARankThatStopsIsAnError) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world,
                                        [&](comm::Context& ctx) {
                                          GradientTable table(ctx, 10, 0, 1, 300ms);
                                          std::vector<float> grad(10, 1.0f), sum;
                                          std::vector<double> extra_sum;
                                          const uint64_t last =
                                              ctx.rank() == 1 ? 1 : 6;  // rank 1 stops after one push
                                          for (uint64_t k = 0; k < last; ++k)
                                            table.Push(grad, {}, &sum, &extra_sum);
                                          if (ctx.rank() == 1) std::this_thread::sleep_for(1s);
                                        },
                                        {.timeout_ms = std::chrono::milliseconds(300)});
  ASSERT_TRUE(errors[0]);
  EXPECT_THAT(comm::testing::Message(errors[0]), testing::HasSubstr("rank 0"));
}

}  // namespace
}  // namespace parasol::apps::gnn
