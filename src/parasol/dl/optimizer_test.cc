// The optimizer against PyTorch's own (libtorch's torch::optim::SGD and AdamW, the reference its
// comments name): the same parameters after several steps of the same gradients, whether a step
// updates each parameter whole or the flat buffer in ranges that cut parameters.
#include "parasol/dl/optimizer.h"

#include <gtest/gtest.h>

#include <vector>

#include <torch/torch.h>

namespace parasol::dl {
namespace {

struct Problem {
  std::vector<torch::Tensor> initial;             // a matrix, a bias and a vector
  std::vector<std::vector<torch::Tensor>> grads;  // per step, per parameter
};

Problem MakeProblem(int steps) {
  torch::manual_seed(7);
  Problem p;
  p.initial = {torch::randn({6, 5}), torch::randn({6}), torch::randn({11})};
  for (int s = 0; s < steps; ++s) {
    std::vector<torch::Tensor> g;
    for (const torch::Tensor& w : p.initial) g.push_back(torch::randn(w.sizes()));
    p.grads.push_back(g);
  }
  return p;
}

// parasol's optimizer over flat buffers; `ranges`: update [0, n) in this many pieces per step
// instead of parameter by parameter.
std::vector<torch::Tensor> RunParasol(const Problem& p, const OptimizerOptions& o, int ranges = 0) {
  std::vector<std::pair<torch::Tensor, int>> params;
  for (const torch::Tensor& w : p.initial) params.emplace_back(w.clone(), 0);
  FlatParameters flat = FlattenParameters(params);
  Optimizer opt(o, flat.params, flat.grads, flat.spans);
  const int64_t n = flat.params.numel();
  for (size_t s = 0; s < p.grads.size(); ++s) {
    for (size_t i = 0; i < params.size(); ++i) {
      flat.grads.narrow(0, flat.spans[i].begin, flat.spans[i].numel).copy_(p.grads[s][i].reshape(-1));
    }
    opt.set_step(static_cast<int64_t>(s));
    if (ranges == 0) {
      for (int i = 0; i < static_cast<int>(params.size()); ++i) opt.UpdateParam(i);
    } else {
      for (int r = 0; r < ranges; ++r) opt.UpdateRange(n * r / ranges, n * (r + 1) / ranges, {});
    }
  }
  std::vector<torch::Tensor> out;
  for (auto& [w, stage] : params) out.push_back(w.detach().clone());
  return out;
}

template <typename TorchOptimizer, typename TorchOptions>
std::vector<torch::Tensor> RunTorch(const Problem& p, const TorchOptions& options) {
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& w : p.initial) params.push_back(w.clone().requires_grad_(true));
  TorchOptimizer opt(params, options);
  for (const auto& step : p.grads) {
    for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = step[i].clone();
    opt.step();
  }
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& w : params) out.push_back(w.detach().clone());
  return out;
}

double MaxDiff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, (a[i] - b[i]).abs().max().item<double>());
  return d;
}

TEST(Optimizer, SgdWithMomentumAndWeightDecayIsPyTorchs) {
  const Problem p = MakeProblem(5);
  const OptimizerOptions o{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
  const auto want =
      RunTorch<torch::optim::SGD>(p, torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.01));
  const auto whole = RunParasol(p, o);
  ASSERT_GT(MaxDiff(whole, p.initial), 0.1) << "the steps moved the parameters";
  EXPECT_LT(MaxDiff(whole, want), 1e-5);
  EXPECT_LT(MaxDiff(RunParasol(p, o, /*ranges=*/4), want), 1e-5) << "ranges that cut parameters";
}

TEST(Optimizer, PlainSgdIsPyTorchs) {
  const Problem p = MakeProblem(3);
  const auto want = RunTorch<torch::optim::SGD>(p, torch::optim::SGDOptions(0.05));
  EXPECT_LT(MaxDiff(RunParasol(p, {.lr = 0.05, .momentum = 0}), want), 1e-6);
}

TEST(Optimizer, AdamWIsPyTorchs) {
  const Problem p = MakeProblem(6);
  const OptimizerOptions o{.kind = OptimizerKind::kAdam, .lr = 0.01, .weight_decay = 0.1};
  const auto want = RunTorch<torch::optim::AdamW>(
      p, torch::optim::AdamWOptions(0.01).betas({0.9, 0.999}).eps(1e-8).weight_decay(0.1));
  const auto whole = RunParasol(p, o);
  ASSERT_GT(MaxDiff(whole, p.initial), 0.01);
  EXPECT_LT(MaxDiff(whole, want), 1e-5);
  EXPECT_LT(MaxDiff(RunParasol(p, o, /*ranges=*/3), want), 1e-5);
}

TEST(Optimizer, AnExternalOptimizerLeavesTheParametersToItsOwner) {
  const Problem p = MakeProblem(2);
  EXPECT_EQ(MaxDiff(RunParasol(p, {.kind = OptimizerKind::kExternal}), p.initial), 0.0);
}

}  // namespace
}  // namespace parasol::dl
