// The mixture-of-experts layer on its own: the auxiliary losses against a hand computation,
// capacity (tokens over it dropped, never duplicated; first choices before second choices), and
// an expert rank with no tokens still meeting its peers in backward.
#include "parasol/dl/moe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <torch/torch.h>

#include "parasol/comm/testing.h"
#include "parasol/dl/torch_generator.h"

namespace parasol::dl {
namespace {

TEST(Moe, AuxiliaryLossesMatchAHandComputation) {
  // Top-1 (Switch's loss): E sum_e f_e P_e with f = (1/2, 1/2, 0), P = (0.4, 0.4, 0.2): 3 x 0.4.
  const torch::Tensor probs = torch::tensor({0.7f, 0.2f, 0.1f, 0.1f, 0.6f, 0.3f}).view({2, 3});
  EXPECT_NEAR(BalanceLoss(probs, torch::tensor({0, 1}, torch::kLong).view({2, 1})).item<double>(), 1.2, 1e-6);
  // Top-2, every choice counted: choices (0, 1) and (1, 2) give f = (1/4, 1/2, 1/4), so
  // 3 (0.25 x 0.4 + 0.5 x 0.4 + 0.25 x 0.2) = 1.05.
  EXPECT_NEAR(BalanceLoss(probs, torch::tensor({0, 1, 1, 2}, torch::kLong).view({2, 2})).item<double>(), 1.05,
              1e-6);
  // Perfectly balanced routing with uniform probabilities gives 1.
  EXPECT_NEAR(BalanceLoss(torch::full({4, 2}, 0.5f), torch::tensor({0, 1, 0, 1}, torch::kLong).view({4, 1}))
                  .item<double>(),
              1.0, 1e-6);
  // z-loss: mean over tokens of (log sum exp logits)^2.
  const double a = std::log(std::exp(1.0) + std::exp(2.0)), b = std::log(2.0);
  EXPECT_NEAR(RouterZLoss(torch::tensor({1.0f, 2.0f, 0.0f, 0.0f}).view({2, 2})).item<double>(),
              (a * a + b * b) / 2, 1e-5);
}

// Four tokens that all prefer expert 0 (top-1, capacity ceil(4 x 1.0 / 2) = 2): the first two are
// kept, computed by expert 0 and scaled by their gate; the last two are dropped (a zero output:
// only the residual carries them), none is counted twice.
TEST(Moe, TokensOverCapacityAreDroppedNeverDuplicated) {
  comm::InProcessWorld world(1);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    SeededTorchGenerator generator(1);
    MoeLayer moe(MoeOptions{.d_model = 4, .d_ff = 8, .experts = 2, .top_k = 1, .capacity_factor = 1.0}, ctx);
    torch::NoGradGuard no_grad;
    moe->router.copy_(torch::tensor({1.0f, 0.0f, 0.0f, 0.0f, -1.0f, 0.0f, 0.0f, 0.0f}).view({2, 4}));
    const torch::Tensor x = torch::tensor({2.0f, 0.1f, 0.2f, 0.3f, 1.0f, -0.5f, 0.4f, 0.0f, 3.0f, 0.0f, 0.0f,
                                           1.0f, 0.5f, 0.5f, 0.5f, 0.5f})
                                .view({4, 4});
    const torch::Tensor y = moe(x);
    EXPECT_EQ(moe->stats().dropped, 2);
    EXPECT_EQ(moe->stats().choices, 4);
    EXPECT_EQ(moe->stats().routed, (std::vector<int64_t>{4, 0}));
    for (int i = 0; i < 2; ++i) {
      const torch::Tensor xi = x[i];
      const torch::Tensor h = torch::gelu(torch::matmul(xi, moe->w1[0]) + moe->b1[0]);
      const torch::Tensor expert = torch::matmul(h, moe->w2[0]) + moe->b2[0];
      const double gate = torch::softmax(torch::matmul(moe->router, xi), 0)[0].item<double>();
      EXPECT_TRUE(torch::allclose(y[i], expert * gate, 1e-5, 1e-6)) << "token " << i;
    }
    EXPECT_TRUE(torch::equal(y[2], torch::zeros({4})));
    EXPECT_TRUE(torch::equal(y[3], torch::zeros({4})));
  }));
}

// Top-2: every token's first choice takes a slot before any second choice.
// Rank 1's experts get no token at all (the router sends every token to expert 0, on rank 0):
// backward still meets in every all-to-all (a rank whose experts had no row once skipped its
// reverse exchange, and the other waited for it until the deadline).
TEST(Moe, AnExpertRankWithNoTokensTakesPartInBackward) {
  comm::InProcessWorld world(2);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(
      world,
      [&](comm::Context& ctx) {
        MoeLayer moe{nullptr};
        {
          SeededTorchGenerator generator(1);  // two ranks build at once: one draws at a time
          moe = MoeLayer(
              MoeOptions{.d_model = 2, .d_ff = 4, .experts = 2, .top_k = 1, .capacity_factor = 1.0}, ctx);
        }
        {
          torch::NoGradGuard no_grad;
          moe->router.copy_(torch::tensor({1.0f, 0.0f, -1.0f, 0.0f}).view({2, 2}));
        }
        const torch::Tensor x = torch::tensor({1.0f, 0.5f, 2.0f, -1.0f}).view({2, 2}).requires_grad_();
        moe(x).sum().backward();
        EXPECT_EQ(moe->stats().routed, (std::vector<int64_t>{2, 0}));
        EXPECT_TRUE(x.grad().defined());
      },
      {.timeout_ms = std::chrono::milliseconds(5000)}));
}

TEST(Moe, FirstChoicesTakeSlotsBeforeSecondChoices) {
  comm::InProcessWorld world(1);
  comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    SeededTorchGenerator generator(1);
    // 4 tokens x 2 choices over 2 experts, capacity ceil(8 x 0.5 / 2) = 2 per expert.
    MoeLayer moe(MoeOptions{.d_model = 2, .d_ff = 4, .experts = 2, .top_k = 2, .capacity_factor = 0.5}, ctx);
    torch::NoGradGuard no_grad;
    moe->router.copy_(torch::tensor({1.0f, 0.0f, 0.0f, 1.0f}).view({2, 2}));
    // Tokens 0, 1 prefer expert 0; tokens 2, 3 prefer expert 1: the four first choices fill both.
    moe(torch::tensor({1.0f, 0.0f, 2.0f, 0.0f, 0.0f, 1.0f, 0.0f, 2.0f}).view({4, 2}));
    EXPECT_EQ(moe->stats().dropped, 4);  // every second choice
    EXPECT_EQ(moe->stats().routed, (std::vector<int64_t>{4, 4}));
  }));
}

}  // namespace
}  // namespace parasol::dl
