// Spatial partitioning against the whole image, on ranks as threads: a row exchange returns the
// rows asked for and sums their gradients back where they live; ResNet-20 (strided convolutions,
// shortcuts, batch norm, the global pool) and LeNet (pools, a flatten) split over 2 and 4 ranks,
// odd heights included, give one rank's output and, averaged over the ranks, its parameter
// gradients; a training step on 2 ranks (and on 4, two groups of 2) is one rank's; a split that
// leaves a rank no row is refused on every rank, and so are ranks that split differently.
#include "parasol/dl/spatial.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "parasol/collective/collectives.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"
#include "parasol/dl/models.h"
#include "parasol/dl/torch_generator.h"
#include "parasol/dl/trainer.h"

namespace parasol::dl {
namespace {

using comm::InProcessWorld;
using comm::testing::ExpectNoErrors;
using comm::testing::RunRanks;

// Rows 0..6 over 3 ranks (rows 0-1, 2-3, 4-6); each rank asks for a range reaching into others.
TEST(Spatial, ExchangedRowsAreTheWholeTensorsAndTheirGradientsGoHome) {
  constexpr int64_t kHeight = 7;
  const torch::Tensor whole = torch::arange(2 * 3 * kHeight * 4, torch::kFloat).view({2, 3, kHeight, 4});
  const std::vector<RowRange> need{{0, 4}, {1, 7}, {3, 5}};
  std::vector<torch::Tensor> rows(3), grads(3);
  InProcessWorld world(3);
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    SpatialGroup group(ctx);
    const torch::Tensor local = group.Local(whole).clone().requires_grad_();
    const torch::Tensor out = ExchangeRows(local, kHeight, need, group);
    // Each rank weighs its rows by (rank + 1): a row's gradient is the sum of its readers' weights.
    (out * static_cast<float>(ctx.rank() + 1)).sum().backward();
    rows[static_cast<size_t>(ctx.rank())] = out.detach();
    grads[static_cast<size_t>(ctx.rank())] = local.grad();
  }));
  for (int r = 0; r < 3; ++r) {
    const RowRange n = need[static_cast<size_t>(r)];
    EXPECT_TRUE(torch::equal(rows[static_cast<size_t>(r)], whole.narrow(2, n.begin, n.size()))) << r;
  }
  // Row i is read by the ranks whose range holds it: rows 0: {0}, 1-2: {0,1}, 3: {0,1,2}, 4: {1,2},
  // 5-6: {1}.
  const std::vector<float> readers{1, 3, 3, 6, 5, 2, 2};
  const torch::Tensor grad = torch::cat(grads, 2);
  for (int64_t i = 0; i < kHeight; ++i) {
    EXPECT_TRUE(torch::equal(grad.select(2, i), torch::full({2, 3, 4}, readers[static_cast<size_t>(i)])))
        << "row " << i;
  }
}

struct Pass {
  torch::Tensor out;
  std::vector<torch::Tensor> grads;
};

// The model's forward and backward on x, split over `ranks` ranks (1: the plain model).
std::vector<Pass> RunModel(const std::string& name, const torch::Tensor& x, const torch::Tensor& y,
                           int ranks) {
  std::vector<Pass> passes(static_cast<size_t>(ranks));
  InProcessWorld world(ranks);
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    torch::set_num_threads(1);
    SpatialGroup group(ctx);
    std::shared_ptr<Model> model;
    {
      SeededTorchGenerator generator(5);
      model = MakeModel(name, {x.size(1), x.size(2), x.size(3)}, 10, ranks > 1 ? &group : nullptr);
    }
    for (BatchNorm2d bn : model->batch_norms()) {
      if (ranks == 1) break;
      bn->set_reducer([&ctx](torch::Tensor& sums) {
        collective::Allreduce(ctx, sums.data_ptr<double>(), sums.data_ptr<double>(), sums.numel(),
                              DType::kFloat64);
      });
    }
    const torch::Tensor out = model->Forward(x);
    torch::cross_entropy_loss(out, y).backward();
    Pass& p = passes[static_cast<size_t>(ctx.rank())];
    p.out = out.detach();
    for (const torch::Tensor& param : model->parameters()) p.grads.push_back(param.grad().clone());
  }));
  return passes;
}

void ExpectSplitIsWhole(const std::string& name, const torch::Tensor& x, int ranks) {
  const torch::Tensor y = torch::arange(x.size(0), torch::kInt64) % 10;
  const Pass whole = RunModel(name, x, y, 1)[0];
  const std::vector<Pass> split = RunModel(name, x, y, ranks);
  for (int r = 0; r < ranks; ++r) {
    EXPECT_TRUE(torch::allclose(split[static_cast<size_t>(r)].out, whole.out, 1e-4, 1e-5))
        << name << " on " << ranks << " ranks: rank " << r << "'s output";
  }
  ASSERT_EQ(split[0].grads.size(), whole.grads.size());
  for (size_t i = 0; i < whole.grads.size(); ++i) {
    torch::Tensor mean = torch::zeros_like(whole.grads[i]);
    for (const Pass& p : split) mean += p.grads[i] / ranks;
    const double scale = whole.grads[i].abs().max().item<double>();
    ASSERT_GT(scale, 0) << "parameter " << i << " has no gradient";
    EXPECT_LT((mean - whole.grads[i]).abs().max().item<double>(), 2e-4 * scale + 1e-6)
        << name << " on " << ranks << " ranks: parameter " << i;
  }
}

TEST(Spatial, ResnetSplitOverTwoAndFourRanksIsTheWholeImage) {
  torch::manual_seed(3);
  const torch::Tensor even = torch::randn({2, 3, 32, 20});
  const torch::Tensor odd = torch::randn({2, 3, 37, 19});  // 37 -> 19 -> 10 rows; 4 ranks: 2 or 3 each
  ExpectSplitIsWhole("resnet20", even, 2);
  ExpectSplitIsWhole("resnet20", odd, 2);
  ExpectSplitIsWhole("resnet20", odd, 4);
}

TEST(Spatial, LenetSplitOverTwoAndFourRanksIsTheWholeImage) {
  torch::manual_seed(4);
  const torch::Tensor x = torch::randn({3, 1, 28, 28});  // pooled to 14, then 5 rows before the flatten
  ExpectSplitIsWhole("lenet", x, 2);
  ExpectSplitIsWhole("lenet", x, 4);
}

TrainOptions SpatialRun(int spatial, int64_t batch) {
  TrainOptions o;
  o.model = "resnet20";
  o.data.kind = "synthetic";
  o.data.shape = {3, 33, 24};
  o.data.train_samples = 16;
  o.data.test_samples = 4;
  o.batch = batch;
  o.steps = 2;
  o.optimizer.lr = 0.05;
  o.optimizer.weight_decay = 1e-4;
  o.spatial_parallel = spatial;
  o.sync.timeout_ms = std::chrono::milliseconds(20000);
  return o;
}

TrainResult TrainOn(int ranks, const TrainOptions& o) {
  InProcessWorld world(ranks);
  std::vector<TrainResult> results(static_cast<size_t>(ranks));
  ExpectNoErrors(
      RunRanks(world, [&](comm::Context& ctx) { results[static_cast<size_t>(ctx.rank())] = Train(ctx, o); }));
  for (int r = 1; r < ranks; ++r) {
    EXPECT_TRUE(torch::equal(results[0].parameters, results[static_cast<size_t>(r)].parameters))
        << "rank " << r;
  }
  return results[0];
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Spatial, StepsOnTwoRanksAndOnTwoGroupsOfTwoAreOneRanksSteps) {
  TrainOptions whole = SpatialRun(1, 2), split = SpatialRun(2, 2);
  whole.predictions_path = TestPath("spatial_whole_predictions.txt");
  split.predictions_path = TestPath("spatial_split_predictions.txt");
  const TrainResult one = TrainOn(1, whole);
  const TrainResult two = TrainOn(2, split);
  // Every test image's class, once (a group's second rank adds none of its own).
  const std::string predicted = ReadAll(whole.predictions_path);
  EXPECT_EQ(std::count(predicted.begin(), predicted.end(), '\n'), 4);
  EXPECT_EQ(ReadAll(split.predictions_path), predicted);
  TrainOptions groups = SpatialRun(2, 1);  // two groups, one image each
  groups.sync_batch_norm = true;           // batch norm over both images, as one rank's batch of 2
  const TrainResult four = TrainOn(4, groups);
  const double scale = one.parameters.abs().max().item<double>();
  EXPECT_LT((two.parameters - one.parameters).abs().max().item<double>(), 1e-4 * scale);
  EXPECT_LT((four.parameters - one.parameters).abs().max().item<double>(), 1e-4 * scale);
  // The evaluation at the end scores the same test images.
  EXPECT_NEAR(two.test_loss, one.test_loss, 1e-4 * one.test_loss);
  EXPECT_NEAR(four.test_loss, one.test_loss, 1e-4 * one.test_loss);
  // And the steps moved the parameters: the comparison is not of the initial model.
  TrainOptions none = SpatialRun(1, 2);
  none.optimizer.lr = 1e-12;
  EXPECT_GT((TrainOn(1, none).parameters - one.parameters).abs().max().item<double>(), 1e-3 * scale);
}

TEST(Spatial, ASplitThatLeavesARankNoRowIsRefusedEverywhere) {
  TrainOptions o = SpatialRun(4, 1);
  o.data.shape = {3, 12, 12};  // the last stage has 3 rows for 4 ranks
  InProcessWorld world(4);
  const std::vector<std::exception_ptr> errors = RunRanks(world, [&](comm::Context& ctx) { Train(ctx, o); });
  for (int r = 0; r < 4; ++r) {
    EXPECT_THAT(comm::testing::Message(errors[static_cast<size_t>(r)]),
                ::testing::HasSubstr("--spatial-parallel 4: a layer's output of 3 rows"))
        << "rank " << r;
  }
  o.spatial_parallel = 3;
  InProcessWorld again(4);
  const std::vector<std::exception_ptr> uneven = RunRanks(again, [&](comm::Context& ctx) { Train(ctx, o); });
  EXPECT_THAT(comm::testing::Message(uneven[0]),
              ::testing::HasSubstr("--spatial-parallel 3 does not divide the 4 ranks"));
  // Ranks that disagree all stop, naming the first that differs, instead of waiting in different
  // groups.
  InProcessWorld mixed(2);
  const std::vector<std::exception_ptr> disagree = RunRanks(mixed, [&](comm::Context& ctx) {
    TrainOptions mine = SpatialRun(ctx.rank() == 0 ? 2 : 1, 1);
    Train(ctx, mine);
  });
  EXPECT_THAT(comm::testing::Message(disagree[0]),
              ::testing::HasSubstr("rank 0: --spatial-parallel: rank 1 runs 1, this rank 2"));
  EXPECT_THAT(comm::testing::Message(disagree[1]),
              ::testing::HasSubstr("rank 1: --spatial-parallel: rank 0 runs 2, this rank 1"));
}

}  // namespace
}  // namespace parasol::dl
