// SGD with momentum and weight decay over a model's flattened parameters, with LARS (layer-wise
// trust ratios) and linear learning-rate warm-up for large batches; or Adam with decoupled weight
// decay (AdamW, as torch.optim.AdamW), the optimizer of Transformers. Updates a whole parameter or
// any contiguous range of the flat buffer, so the synchroniser can update each parameter as soon
// as its gradient is reduced, or only this rank's shard (weight-update sharding).
//
// Threading: one thread at a time (the synchroniser's communication thread during training).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace parasol::dl {

// kExternal: the synchroniser only averages the gradients; the caller steps its own optimizer on
// them once every update is done (the Python plugin wrapping an optimizer it cannot run itself).
enum class OptimizerKind { kSgd, kAdam, kExternal };

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kSgd;
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 0;
  bool lars = false;  // trust ratio eta * |w| / (|g| + wd |w|) on weights (dim > 1)
  double lars_eta = 0.001;
  int64_t warmup_steps = 0;  // learning rate rises linearly to lr over these steps
  // > 0: after warm-up the rate falls along a half cosine to 0 at this step (the run's last):
  // large early steps, and late ones too small to undo what the run learned.
  int64_t cosine_steps = 0;
  double adam_beta1 = 0.9, adam_beta2 = 0.999, adam_eps = 1e-8;  // kAdam (momentum unused)
};

// A parameter's place in the flat buffers.
struct ParamSpan {
  int64_t begin = 0;
  int64_t numel = 0;
  int stage = 0;
  bool matrix = false;  // dim > 1: LARS applies
  int64_t end() const { return begin + numel; }
};

// One flat buffer of parameters and one of their gradients, and each parameter's place.
struct FlatParameters {
  torch::Tensor params, grads;
  std::vector<ParamSpan> spans;
};
// Moves each (parameter, stage)'s values into one flat buffer in CPU memory, in order, the parameter
// becoming a view of it, and makes its gradient a view of a zeroed second buffer (autograd
// accumulates there). views = false: the buffer holds a copy and the parameters stay as they are
// (parameters on a GPU, mirrored by the synchroniser).
FlatParameters FlattenParameters(const std::vector<std::pair<torch::Tensor, int>>& params, bool views = true);

class Optimizer {
 public:
  // params and grads: flat buffers of equal size that the spans index.
  Optimizer(OptimizerOptions options, torch::Tensor params, torch::Tensor grads,
            std::vector<ParamSpan> spans);

  // Learning rate of a step (0-based) after warm-up.
  double LearningRate(int64_t step) const;
  // `lr_scale` multiplies the step's rate (AdaScale's gain under adaptive batches).
  void set_step(int64_t step, double lr_scale = 1.0) {
    lr_ = LearningRate(step) * lr_scale;
    adam_t_ = step + 1;
  }

  // Applies one step to parameter i from its (reduced, averaged) gradient.
  void UpdateParam(int i);
  // Applies one step to [begin, end), which may cut parameters; `trust` holds the LARS ratio of
  // every parameter (index = parameter) when LARS is on (computed from whole-parameter norms).
  void UpdateRange(int64_t begin, int64_t end, const std::vector<double>& trust);
  // LARS ratio from the squared norms of a parameter and of its gradient.
  double TrustRatio(double w_norm2, double g_norm2) const;

  const OptimizerOptions& options() const { return options_; }
  const std::vector<ParamSpan>& spans() const { return spans_; }
  // SGD's momentum, or Adam's first moment.
  torch::Tensor& momentum_buffer() { return momentum_; }
  // Adam's second moment (empty under SGD).
  torch::Tensor& second_moment() { return second_; }

 private:
  void Apply(int64_t begin, int64_t end, double trust);
  void ApplyAdam(int64_t begin, int64_t end);

  OptimizerOptions options_;
  torch::Tensor params_;
  torch::Tensor grads_;
  torch::Tensor momentum_;
  torch::Tensor second_;
  std::vector<ParamSpan> spans_;
  double lr_ = 0;
  int64_t adam_t_ = 1;  // Adam's bias correction: the step being taken, from 1
};

}  // namespace parasol::dl
