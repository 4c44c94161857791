#include "parasol/apps/gnn/delayed_allreduce.h"

#include <gtest/gtest.h>

#include <thread>

#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"

namespace parasol::apps::gnn {
namespace {

// Push k of rank r carries (k + 1) * (r + 1) in every entry; the sum handed back at push k is that
// of push k - S over all ranks: (k - S + 1) * ranks * (ranks + 1) / 2, never a newer or older one,
// while one rank is slow.
TEST(DelayedAllreduceTest, HandsBackTheSumOfSPushesAgo) {
  const int ranks = 3;
  for (uint32_t staleness : {0u, 1u, 3u}) {
    comm::InProcessWorld world(ranks);
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      DelayedAllreduce sums(ctx, staleness);
      std::vector<float> grad(1000), sum;
      for (uint64_t k = 0; k < 8; ++k) {
        if (ctx.rank() == 2) std::this_thread::sleep_for(std::chrono::milliseconds(3));
        std::fill(grad.begin(), grad.end(), static_cast<float>((k + 1) * static_cast<uint64_t>(ctx.rank() + 1)));
        const bool got = sums.Push(grad, &sum);
        ASSERT_EQ(got, k >= staleness) << "push " << k << ", S = " << staleness;
        if (!got) continue;
        const auto want = static_cast<float>((k - staleness + 1) * ranks * (ranks + 1) / 2);
        ASSERT_EQ(sum.size(), grad.size());
        for (float x : sum) ASSERT_EQ(x, want) << "push " << k << ", S = " << staleness;
      }
    }));
  }
}

}  // namespace
}  // namespace parasol::apps::gnn
