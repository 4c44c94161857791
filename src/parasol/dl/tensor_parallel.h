// Tensor (Megatron-style) parallelism: layers whose weights are split over the ranks of a tensor
// group, with the collectives of the forward and backward pass on the collective library.
//   column-parallel linear  W's output rows split: y_t = x W_t^T + b_t, x replicated; backward sums
//                           dx over the group (Megatron's f), started before the weight gradient
//                           is formed and waited for after it, so the two overlap
//   row-parallel linear     W's input columns split: y = sum_t x_t W_t^T + b (Megatron's g)
//   vocabulary-parallel embedding and cross-entropy: each rank holds a block of the vocabulary's
//                           rows (BlockRange: any vocabulary size), looks up the tokens it holds,
//                           and the softmax's max, sum and target logit are summed over the group
// A group of one rank runs the plain layers, with no collective. Every rank of a group builds
// the same full weights from torch's generator and keeps its part, so a model's initial values do
// not depend on the number of ranks.
//
// Threading: a layer runs on the thread that runs its model's forward and backward; a
// TensorGroup's Context is used by that thread and its own communication thread only.
#pragma once

#include <cstdint>
#include <future>
#include <memory>

#include <torch/torch.h>

#include "parasol/comm/context.h"
#include "parasol/core/thread_pool.h"

namespace parasol::dl {

// A tensor group's context for the collectives of forward and backward, and a second one on its
// own thread for the sums that overlap the weight-gradient products.
class TensorGroup {
 public:
  // Collective over `group` (it duplicates it). The group must outlive this object.
  explicit TensorGroup(comm::Context& group);
  int size() const { return group_.size(); }
  int rank() const { return group_.rank(); }
  comm::Context& context() { return group_; }

  // In-place sum of a float tensor over the group, now.
  void Sum(torch::Tensor& t);
  // Starts the sum of `t` (contiguous float, left untouched by the caller until the wait) on the
  // communication thread; at most one at a time, in the same order on every rank.
  std::future<void> StartSum(torch::Tensor t);

 private:
  comm::Context& group_;
  std::unique_ptr<comm::Context> async_;
  ThreadPool thread_{1};
};

// Megatron's f and g as autograd functions (identity when the group has one rank).
torch::Tensor CopyToTensorGroup(const torch::Tensor& x, TensorGroup& group);
torch::Tensor ReduceFromTensorGroup(const torch::Tensor& x, TensorGroup& group);

// y = x W^T (+ b) for a replicated x and this rank's rows W of a column-parallel weight; backward
// sums dx over the group while it forms dW. `b` may be undefined.
torch::Tensor ColumnParallelMatmul(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                   TensorGroup& group);

// A weight whose `parts` stacked blocks of `out / parts` rows each are split over the group (a
// fused Q, K, V projection has 3 parts): this rank keeps rows [BlockRange] of every part.
class ColumnParallelLinearImpl : public torch::nn::Module {
 public:
  // REQUIRES: parts divides out, and the group's size divides out / parts (else
  // InvalidArgumentError). Weights ~ N(0, init_std), biases zero.
  ColumnParallelLinearImpl(int64_t in, int64_t out, TensorGroup& group, int64_t parts = 1,
                           double init_std = 0.02);
  torch::Tensor forward(const torch::Tensor& x);  // [..., in] -> [..., out / group size]

  torch::Tensor weight, bias;

 private:
  TensorGroup& group_;
};
TORCH_MODULE(ColumnParallelLinear);

class RowParallelLinearImpl : public torch::nn::Module {
 public:
  // REQUIRES: the group's size divides in (else InvalidArgumentError).
  RowParallelLinearImpl(int64_t in, int64_t out, TensorGroup& group, double init_std = 0.02);
  torch::Tensor forward(const torch::Tensor& x);  // [..., in / group size] -> [..., out]

  torch::Tensor weight, bias;

 private:
  TensorGroup& group_;
};
TORCH_MODULE(RowParallelLinear);

class VocabParallelEmbeddingImpl : public torch::nn::Module {
 public:
  VocabParallelEmbeddingImpl(int64_t vocab, int64_t dim, TensorGroup& group, double init_std = 0.02);
  torch::Tensor forward(const torch::Tensor& ids);  // int64 ids -> [..., dim], replicated
  // Logits of this rank's vocabulary block for a replicated x [..., dim] (the tied output layer).
  torch::Tensor Logits(const torch::Tensor& x);
  int64_t vocab_begin() const { return begin_; }
  int64_t vocab_end() const { return end_; }

  torch::Tensor weight;  // rows [vocab_begin, vocab_end)

 private:
  TensorGroup& group_;
  int64_t begin_ = 0, end_ = 0;
};
TORCH_MODULE(VocabParallelEmbedding);

// Per-token softmax cross-entropy of logits split by vocabulary block over the group: `logits`
// [N, end - begin] are this rank's, `targets` [N] global ids. Returns [N] losses, equal on every rank.
torch::Tensor VocabParallelCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                        int64_t vocab_begin, TensorGroup& group);

}  // namespace parasol::dl
