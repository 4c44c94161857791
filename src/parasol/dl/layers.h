// Layers whose backward talks to the gradient synchroniser: a fully-connected layer that can hand
// its sufficient factors (the batch's output gradients and inputs) to it instead of forming the
// weight gradient, and a batch norm whose statistics can be reduced over all ranks.
//
// Threading: a layer is used by the thread that runs its model's forward and backward.
#pragma once

#include <functional>

#include <torch/torch.h>

namespace parasol::dl {

// Receives a fully-connected layer's factors during backward: g (K x out) and x (K x in), so that
// the batch's weight gradient is g^T x and the bias gradient the column sums of g.
using FactorSink = std::function<void(const torch::Tensor& g, const torch::Tensor& x)>;

class FcLayerImpl : public torch::nn::Module {
 public:
  FcLayerImpl(int64_t in_features, int64_t out_features);
  torch::Tensor forward(const torch::Tensor& x);
  // With a sink, backward computes only the input gradient and sends the factors to it; the
  // weight and bias get no gradient from autograd (the sink's owner writes them).
  void set_factor_sink(FactorSink sink) { sink_ = std::move(sink); }
  bool sfb() const { return static_cast<bool>(sink_); }
  int64_t in_features() const { return weight.size(1); }
  int64_t out_features() const { return weight.size(0); }

  torch::Tensor weight;
  torch::Tensor bias;

 private:
  FactorSink sink_;
};
TORCH_MODULE(FcLayer);

// Sums a few float values over every rank (for batch-norm statistics); identity in one process.
using StatsReducer = std::function<void(torch::Tensor& sums)>;

class BatchNorm2dImpl : public torch::nn::Module {
 public:
  explicit BatchNorm2dImpl(int64_t channels, double momentum = 0.1, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x);
  // With a reducer, training-mode statistics (and backward's sums) cover the global batch.
  void set_reducer(StatsReducer reducer) { reducer_ = std::move(reducer); }

  torch::Tensor weight;
  torch::Tensor bias;
  torch::Tensor running_mean;
  torch::Tensor running_var;

 private:
  double momentum_;
  double eps_;
  StatsReducer reducer_;
};
TORCH_MODULE(BatchNorm2d);

}  // namespace parasol::dl
