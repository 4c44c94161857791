#include "parasol/apps/gnn/epoch_figures.h"

#include <gtest/gtest.h>

#include <chrono>

#include "parasol/apps/gnn/gradient_table.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"

namespace parasol::apps::gnn {
namespace {

// Rank r's sums in epoch e: training loss e (r + 1), r correct; validation loss e + r, r correct;
// 2r correct on the test split. Whether summed at once or carried by the pushes of a bound S,
// every rank reports epochs 1..8 in order with the sums over ranks and the parameters after
// each epoch's step, also when a checkpoint completes the pending epochs early.
TEST(EpochFiguresTest, CarriedFiguresEqualSummedOnes) {
  const int ranks = 3;
  const std::array<double, 3> counts = {10, 20, 40};
  for (uint32_t staleness : {0u, 1u, 2u}) {
    comm::InProcessWorld world(ranks);
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      const bool carried = staleness > 0;
      std::vector<GnnEpoch> reported;
      std::vector<float> params_seen;
      EpochFigures figures(ctx, counts, carried, [&](const GnnEpoch& e, std::span<const float> params) {
        reported.push_back(e);
        ASSERT_EQ(params.size(), 1u);
        params_seen.push_back(params[0]);
      });
      GradientTable table(ctx, 1, carried ? EpochFigures::kCarried : 0, staleness, std::chrono::seconds(10));
      const double r = ctx.rank();
      std::vector<float> sum;
      std::vector<double> arrived;
      for (int e = 1; e <= 8; ++e) {
        const auto carry = figures.Fitted(e, e * (r + 1), r);
        const float grad = 0;
        if (table.Push({&grad, 1}, carried ? std::span<const double>(carry) : std::span<const double>(), &sum,
                       &arrived) &&
            carried) {
          figures.Arrived(e - static_cast<int>(staleness), arrived);
        }
        const float params = static_cast<float>(e) * 10;
        figures.Evaluated(e, {e + r, r, 2 * r}, {&params, 1}, e, 0);
        if (e == 5) figures.CompleteAll();  // a checkpoint
      }
      figures.CompleteAll();
      table.Finish();
      ASSERT_EQ(reported.size(), 8u) << "S = " << staleness;
      for (int e = 1; e <= 8; ++e) {
        const GnnEpoch& got = reported[static_cast<size_t>(e - 1)];
        EXPECT_EQ(got.epoch, e);
        EXPECT_DOUBLE_EQ(got.train_loss, e * (1 + 2 + 3) / counts[0])
            << "epoch " << e << ", S = " << staleness;
        EXPECT_DOUBLE_EQ(got.train_accuracy, 3 / counts[0]);
        EXPECT_DOUBLE_EQ(got.val_loss, (3 * e + 3) / counts[1]) << "epoch " << e << ", S = " << staleness;
        EXPECT_DOUBLE_EQ(got.val_accuracy, 3 / counts[1]);
        EXPECT_DOUBLE_EQ(got.test_accuracy, 6 / counts[2]);
        EXPECT_EQ(got.seconds, e);
        EXPECT_EQ(params_seen[static_cast<size_t>(e - 1)], static_cast<float>(e) * 10);
      }
    }));
  }
}

}  // namespace
}  // namespace parasol::apps::gnn
