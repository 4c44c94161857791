// A dynamic network: an input embedding, a vertex program run by the executor over each batch's
// graphs, and an output layer on every labelled vertex's hidden state (dropout before it).
//   tree-lstm   TreeLstmCell over binarised trees, 5 sentiment classes on every node (SST)
//   lstm-lm     LstmCell over chains, each position predicting the next token
//   tree-fc     TreeFcCell over complete binary trees (Cavs's synthetic benchmark)
#pragma once

#include <cstdint>
#include <string>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "parasol/dl/dynamic/level_executor.h"
#include "parasol/dl/dynamic/vertex_program.h"

namespace parasol::dl::dynamic {

struct DynamicNetOptions {
  std::string cell = "tree-lstm";  // tree-lstm, lstm-lm or tree-fc
  int64_t vocab = 0;
  int64_t embedding = 300;
  int64_t hidden = 150;
  int64_t classes = 5;
  double dropout = 0.5;
};

class DynamicNetImpl : public torch::nn::Module {
 public:
  // InvalidArgumentError for an unknown cell or a non-positive size.
  explicit DynamicNetImpl(const DynamicNetOptions& options);

  // Runs forward over the schedule; returns the labelled vertices' logits [labelled, classes] and
  // their labels. Keep the result until Backward.
  std::pair<torch::Tensor, torch::Tensor> Forward(const Schedule& s);
  // After loss.backward(): the executor's backward through the levels.
  void Backward();
  // The rows of the last Forward's logits that are each graph's root, in graph order.
  torch::Tensor RootLogits(const Schedule& s, const torch::Tensor& logits) const;
  // A module's forward is needed to sit in a Model's stage; a dynamic network runs through
  // Forward(schedule) only.
  torch::Tensor forward(const torch::Tensor&);

  // Dropout draws from a generator of this network's own, seeded here (each step: the run's seed,
  // the step and the rank), so that a run resumed from a checkpoint draws what the uninterrupted
  // run drew, and ranks that are threads of one process do not share torch's global generator.
  void SeedDropout(uint64_t seed);

  LevelExecutor& executor() { return *executor_; }
  void set_executor_options(const LevelExecutorOptions& o) {
    executor_ = std::make_unique<LevelExecutor>(*program_, o);
  }

  torch::nn::Embedding embedding{nullptr};
  torch::nn::Linear output{nullptr};

 private:
  std::shared_ptr<VertexProgramImpl> program_;
  double dropout_ = 0;
  at::Generator generator_;
  std::unique_ptr<LevelExecutor> executor_;
  torch::Tensor states_;    // the last forward's states, a leaf the loss's gradient reaches
  torch::Tensor labelled_;  // rows with a label
};
TORCH_MODULE(DynamicNet);

}  // namespace parasol::dl::dynamic
