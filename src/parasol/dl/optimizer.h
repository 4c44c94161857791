// SGD with momentum and weight decay over a model's flattened parameters, with LARS (layer-wise
// trust ratios) and linear learning-rate warm-up for large batches. Updates a whole parameter or
// any contiguous range of the flat buffer, so the synchroniser can update each parameter as soon
// as its gradient is reduced, or only this rank's shard (weight-update sharding).
//
// Threading: one thread at a time (the synchroniser's communication thread during training).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace parasol::dl {

struct OptimizerOptions {
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 0;
  bool lars = false;          // trust ratio eta * |w| / (|g| + wd |w|) on weights (dim > 1)
  double lars_eta = 0.001;
  int64_t warmup_steps = 0;   // learning rate rises linearly to lr over these steps
};

// A parameter's place in the flat buffers.
struct ParamSpan {
  int64_t begin = 0;
  int64_t numel = 0;
  int stage = 0;
  bool matrix = false;  // dim > 1: LARS applies
  int64_t end() const { return begin + numel; }
};

class Optimizer {
 public:
  // params and grads: flat buffers of equal size that the spans index.
  Optimizer(OptimizerOptions options, torch::Tensor params, torch::Tensor grads, std::vector<ParamSpan> spans);

  // Learning rate of a step (0-based) after warm-up.
  double LearningRate(int64_t step) const;
  // `lr_scale` multiplies the step's rate (AdaScale's gain under adaptive batches).
  void set_step(int64_t step, double lr_scale = 1.0) { lr_ = LearningRate(step) * lr_scale; }

  // Applies one step to parameter i from its (reduced, averaged) gradient.
  void UpdateParam(int i);
  // Applies one step to [begin, end), which may cut parameters; `trust` holds the LARS ratio of
  // every parameter (index = parameter) when LARS is on (computed from whole-parameter norms).
  void UpdateRange(int64_t begin, int64_t end, const std::vector<double>& trust);
  // LARS ratio from the squared norms of a parameter and of its gradient.
  double TrustRatio(double w_norm2, double g_norm2) const;

  const OptimizerOptions& options() const { return options_; }
  const std::vector<ParamSpan>& spans() const { return spans_; }
  torch::Tensor& momentum_buffer() { return momentum_; }

 private:
  void Apply(int64_t begin, int64_t end, double trust);

  OptimizerOptions options_;
  torch::Tensor params_;
  torch::Tensor grads_;
  torch::Tensor momentum_;
  std::vector<ParamSpan> spans_;
  double lr_ = 0;
};

}  // namespace parasol::dl
