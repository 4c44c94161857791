// The tensor-parallel layers against the plain layers they split, on 2 ranks as threads: a
// column-parallel layer feeding a row-parallel one (Megatron's MLP) gives one rank's output and
// input gradient, and each rank's weight gradients are its block of one rank's; the
// vocabulary-parallel cross-entropy of 7 words over 2 ranks is torch's cross-entropy, gradient
// included; sizes that do not split are refused.
#include "parasol/dl/tensor_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include <torch/torch.h>

#include "parasol/collective/collectives.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/dl/torch_generator.h"

namespace parasol::dl {
namespace {

using comm::InProcessWorld;
using comm::testing::ExpectNoErrors;
using comm::testing::RunRanks;

struct MlpRun {
  torch::Tensor y, dx, dw1, dw2;  // output, input gradient, each layer's weight gradient
};

// x [5, 4] -> column-parallel 4 -> 6 -> gelu -> row-parallel 6 -> 3, on `ranks` ranks.
std::vector<MlpRun> RunMlp(int ranks) {
  std::vector<MlpRun> out(static_cast<size_t>(ranks));
  InProcessWorld world(ranks);
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    torch::set_num_threads(1);
    TensorGroup group(ctx);  // collective: before the lock
    ColumnParallelLinear fc1{nullptr};
    RowParallelLinear fc2{nullptr};
    torch::Tensor x;
    {
      SeededTorchGenerator generator(11);  // every rank draws the same full weights
      fc1 = ColumnParallelLinear(4, 6, group, 1, 0.5);
      fc2 = RowParallelLinear(6, 3, group, 0.5);
      x = torch::randn({5, 4}).requires_grad_();
    }
    const torch::Tensor y = fc2(torch::gelu(fc1(x)));
    (y * torch::arange(15, torch::kFloat).view({5, 3})).sum().backward();  // unequal weights per output
    out[static_cast<size_t>(ctx.rank())] = {y.detach(), x.grad(), fc1->weight.grad(), fc2->weight.grad()};
  }));
  return out;
}

TEST(TensorParallel, ColumnThenRowParallelLayersAreThePlainLayers) {
  const MlpRun one = RunMlp(1)[0];
  const std::vector<MlpRun> two = RunMlp(2);
  ASSERT_GT(one.dx.abs().max().item<double>(), 1e-3);
  for (int r = 0; r < 2; ++r) {
    const MlpRun& t = two[static_cast<size_t>(r)];
    EXPECT_TRUE(torch::allclose(t.y, one.y, 1e-5, 1e-6)) << "rank " << r;
    EXPECT_TRUE(torch::allclose(t.dx, one.dx, 1e-5, 1e-6)) << "rank " << r << ": dx summed over the group";
    // fc1 keeps rows [3r, 3r + 3) of the 6 outputs; fc2 the same block of its 6 input columns.
    EXPECT_TRUE(torch::allclose(t.dw1, one.dw1.narrow(0, 3 * r, 3), 1e-5, 1e-6)) << "rank " << r;
    EXPECT_TRUE(torch::allclose(t.dw2, one.dw2.narrow(1, 3 * r, 3), 1e-5, 1e-6)) << "rank " << r;
  }
}

TEST(TensorParallel, VocabularyParallelCrossEntropyIsTorchsOnAVocabularyThatDoesNotDivide) {
  torch::manual_seed(3);
  const torch::Tensor logits = torch::randn({6, 7});
  const torch::Tensor targets = torch::tensor({0, 6, 3, 4, 2, 5}, torch::kLong);
  const torch::Tensor full = logits.clone().requires_grad_();
  const torch::Tensor want = torch::nn::functional::cross_entropy(
      full, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  want.sum().backward();

  InProcessWorld world(2);
  std::vector<torch::Tensor> losses(2), grads(2);
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    TensorGroup group(ctx);
    const auto [b, e] = collective::BlockRange(7, 2, ctx.rank());  // 4 words, then 3
    const torch::Tensor mine =
        logits.narrow(1, static_cast<int64_t>(b), static_cast<int64_t>(e - b)).clone().requires_grad_();
    const torch::Tensor l = VocabParallelCrossEntropy(mine, targets, static_cast<int64_t>(b), group);
    l.sum().backward();
    losses[static_cast<size_t>(ctx.rank())] = l.detach();
    grads[static_cast<size_t>(ctx.rank())] = mine.grad();
  }));
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(torch::allclose(losses[static_cast<size_t>(r)], want.detach(), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(torch::cat({grads[0], grads[1]}, 1), full.grad(), 1e-5, 1e-6));
}

TEST(TensorParallel, SizesThatDoNotSplitAreRefused) {
  InProcessWorld world(2);
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    TensorGroup group(ctx);
    EXPECT_THROW(ColumnParallelLinear(4, 5, group), InvalidArgumentError);
    EXPECT_THROW(ColumnParallelLinear(4, 6, group, /*parts=*/4), InvalidArgumentError);
    EXPECT_THROW(RowParallelLinear(5, 3, group), InvalidArgumentError);
    EXPECT_THROW(VocabParallelEmbedding(1, 8, group), InvalidArgumentError);
  }));
}

}  // namespace
}  // namespace parasol::dl
