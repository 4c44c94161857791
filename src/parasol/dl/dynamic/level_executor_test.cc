// Batched execution against one vertex at a time, and the gradient against finite differences.
#include "parasol/dl/dynamic/level_executor.h"
#include "parasol/core/testing.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/dl/dynamic/dynamic_data.h"
#include "parasol/dl/dynamic/dynamic_net.h"
#include "parasol/dl/dynamic/schedule.h"
#include "parasol/dl/dynamic/sst_treebank.h"

namespace parasol::dl::dynamic {
namespace {

std::string TreebankDir() {
  const char* d = std::getenv("PARASOL_DATA");
  return std::string(d ? d : "data") + "/sst";
}

struct Pass {
  double loss = 0;
  std::vector<torch::Tensor> grads;
};

// One forward and backward of `net` over `graphs` (loss: summed cross-entropy over the labelled
// vertices), the parameters' gradients.
Pass ForwardBackward(DynamicNet& net, const std::vector<const ExampleGraph*>& graphs, Batching batching) {
  net->zero_grad();
  const Schedule s = MakeSchedule(graphs, batching);
  auto [logits, labels] = net->Forward(s);
  const torch::Tensor loss = torch::nn::functional::cross_entropy(
      logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  loss.backward();
  net->Backward();
  Pass r{.loss = loss.item<double>()};
  for (const torch::Tensor& p : net->parameters())
    r.grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return r;
}

// Batched by level, with and without the inputs' projection hoisted, and one vertex at a time give
// the same loss and gradients on 16 SST trees, for each cell.
TEST(LevelExecutor, BatchedAndPerNodeAgree) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  const Treebank t = ReadTreebank(TreebankDir() + "/dev.txt", vocab, true);
  std::vector<const ExampleGraph*> graphs;
  for (size_t i = 0; i < 16; ++i) graphs.push_back(&t.trees[i]);
  for (const char* cell : {"tree-lstm", "tree-fc"}) {
    torch::manual_seed(3);
    DynamicNet net(DynamicNetOptions{.cell = cell,
                                     .vocab = static_cast<int64_t>(vocab.size()),
                                     .embedding = 12,
                                     .hidden = 10,
                                     .dropout = 0});
    const Pass batched = ForwardBackward(net, graphs, Batching::kBatched);
    net->set_executor_options({.hoist_inputs = false});
    const Pass lazy_off = ForwardBackward(net, graphs, Batching::kBatched);
    const Pass per_node = ForwardBackward(net, graphs, Batching::kPerNode);
    EXPECT_NEAR(batched.loss, per_node.loss, 1e-4 * batched.loss) << cell;
    EXPECT_NEAR(batched.loss, lazy_off.loss, 1e-4 * batched.loss) << cell;
    for (size_t i = 0; i < batched.grads.size(); ++i) {
      EXPECT_TRUE(torch::allclose(batched.grads[i], per_node.grads[i], 1e-3, 1e-6))
          << cell << " parameter " << i;
      EXPECT_TRUE(torch::allclose(batched.grads[i], lazy_off.grads[i], 1e-3, 1e-6))
          << cell << " parameter " << i;
    }
  }
}

// Chains (the LSTM): batched by position against one vertex at a time.
TEST(LevelExecutor, ChainsBatchedAndPerNodeAgree) {
  std::string text = "a b c d\nb c\n\nd a b\nc c c c c\n";
  text.append(60, 'x');  // (appended, not concatenated: GCC 12 warns wrongly on the temporaries)
  text += '\n';
  const std::string path = WriteTestFile("chains.txt", text);
  const DynamicData d = LoadTextChains(path);
  ASSERT_GE(d.train.size(), 3u);
  EXPECT_EQ(d.train[0].size(), 4u);  // a b c d: each predicts the next, d predicts the line's end
  std::vector<const ExampleGraph*> graphs;
  for (const ExampleGraph& g : d.train) graphs.push_back(&g);
  torch::manual_seed(4);
  DynamicNet net(DynamicNetOptions{
      .cell = "lstm-lm", .vocab = d.vocab, .embedding = 6, .hidden = 5, .classes = d.classes, .dropout = 0});
  const Pass batched = ForwardBackward(net, graphs, Batching::kBatched);
  const Pass per_node = ForwardBackward(net, graphs, Batching::kPerNode);
  EXPECT_NEAR(batched.loss, per_node.loss, 1e-5 * batched.loss);
  for (size_t i = 0; i < batched.grads.size(); ++i) {
    EXPECT_TRUE(torch::allclose(batched.grads[i], per_node.grads[i], 1e-3, 1e-6)) << "parameter " << i;
  }
}

// The Tree-LSTM's gradient on a tiny tree, in double precision, against central differences.
TEST(LevelExecutor, TreeLstmGradientMatchesFiniteDifferences) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  const Treebank t = ReadTreebank(WriteTestFile("tiny.txt", "(3 (1 a) (4 (2 b) (0 c)))\n"), vocab, true);
  const std::vector<const ExampleGraph*> graphs = {&t.trees[0]};
  torch::manual_seed(5);
  DynamicNet net(
      DynamicNetOptions{.cell = "tree-lstm", .vocab = 4, .embedding = 3, .hidden = 4, .dropout = 0});
  net->to(torch::kFloat64);
  const Pass r = ForwardBackward(net, graphs, Batching::kBatched);
  const auto loss = [&] {
    torch::NoGradGuard no_grad;
    auto [logits, labels] = net->Forward(MakeSchedule(graphs, Batching::kBatched));
    return torch::nn::functional::cross_entropy(
               logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
        .item<double>();
  };
  size_t checked = 0;
  std::vector<torch::Tensor> params = net->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    torch::Tensor flat = params[i].detach().view({-1});
    const torch::Tensor grad = r.grads[i].view({-1});
    for (int64_t k = 0; k < flat.numel(); k += 2) {
      const double saved = flat[k].item<double>(), h = 1e-6;
      flat[k] = saved + h;
      const double up = loss();
      flat[k] = saved - h;
      const double down = loss();
      flat[k] = saved;
      EXPECT_NEAR(grad[k].item<double>(), (up - down) / (2 * h), 1e-6) << "parameter " << i << " entry " << k;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace parasol::dl::dynamic
