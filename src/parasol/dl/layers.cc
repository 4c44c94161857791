#include "parasol/dl/layers.h"

#include <cmath>

#include "parasol/dl/autograd_handle.h"

namespace parasol::dl {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y = x W^T + b; backward: dx = g W, and the factors (g, x) go to the layer's sink.
class SfbLinearFunction : public torch::autograd::Function<SfbLinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& b, int64_t layer) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["layer"] = layer;
    return torch::addmm(b, x, w.t());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor g = grad_outputs[0].contiguous();
    torch::Tensor dx = g.mm(saved[1]);
    const FactorSink& sink = *FromHandle<const FactorSink>(ctx->saved_data["layer"]);
    sink(g, saved[0]);
    return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// Batch norm over the global batch: per-channel sums are reduced over the ranks in forward (mean,
// variance) and again in backward (the two sums the input gradient needs). Same formula with one
// rank, so N ranks with batch B match one rank with batch N x B. Each pass over the activations is
// one of torch's fused kernels: the local mean and variance in one pass, the normalisation as an
// inference-mode batch norm with the global statistics, the backward's sums as its weight and bias
// gradients with them.
class SyncBatchNormFunction : public torch::autograd::Function<SyncBatchNormFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& b, torch::Tensor running_mean, torch::Tensor running_var,
                               double momentum, double eps, int64_t reducer) {
    const int64_t c = x.size(1);
    const double local_n = static_cast<double>(x.numel() / c);
    // torch's batch-norm statistics kernel: this rank's mean and biased variance in one pass.
    const auto [local_mean, local_var] = at::batch_norm_update_stats(x, std::nullopt, std::nullopt, 0.0);
    const torch::Tensor mean_d = local_mean.to(torch::kFloat64);
    torch::Tensor sums =
        torch::cat({mean_d * local_n, (local_var.to(torch::kFloat64) + mean_d * mean_d) * local_n,
                    torch::full({1}, local_n, torch::kFloat64)});
    (*FromHandle<const StatsReducer>(reducer))(sums);
    const double n = sums[2 * c].item<double>();
    const torch::Tensor mean = sums.narrow(0, 0, c) / n;
    const torch::Tensor var = (sums.narrow(0, c, c) / n - mean * mean).clamp_min(0);
    const torch::Tensor mean_f = mean.to(torch::kFloat32), var_f = var.to(torch::kFloat32);
    const torch::Tensor invstd = (var + eps).rsqrt().to(torch::kFloat32);
    torch::NoGradGuard no_grad;
    running_mean.mul_(1 - momentum).add_(mean_f, momentum);
    running_var.mul_(1 - momentum).add_((var * (n / std::max(n - 1, 1.0))).to(torch::kFloat32), momentum);
    ctx->save_for_backward({x, w, mean_f, invstd});
    ctx->saved_data["reducer"] = reducer;
    ctx->saved_data["n"] = n;
    return torch::batch_norm(x, w, b, mean_f, var_f, /*training=*/false, 0.0, eps, /*cudnn_enabled=*/false);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &w = saved[1], &mean = saved[2], &invstd = saved[3];
    const int64_t c = x.size(1);
    const torch::Tensor g = grad_outputs[0].contiguous();
    // With the global statistics as the batch's, the weight and bias gradients are this rank's
    // sums of g * xhat and of g.
    auto [unused, sum_gx, sum_g] = at::native_batch_norm_backward(
        g, x, w, torch::Tensor(), torch::Tensor(), mean, invstd, /*train=*/true, 0.0, {false, true, true});
    torch::Tensor sums = torch::cat({sum_g, sum_gx}).to(torch::kFloat64);
    (*FromHandle<const StatsReducer>(ctx->saved_data["reducer"]))(sums);
    const double n = ctx->saved_data["n"].toDouble();
    const torch::Tensor mean_g = (sums.narrow(0, 0, c) / n).to(torch::kFloat32);
    const torch::Tensor mean_gx = (sums.narrow(0, c, c) / n).to(torch::kFloat32);
    // dx = w invstd (g - mean_g - xhat mean_gx), xhat = (x - mean) invstd: per channel,
    // dx = a g + b x + d.
    const torch::Tensor a = w * invstd, slope = -a * invstd * mean_gx;
    const torch::Tensor d = -a * mean_g - slope * mean;
    torch::Tensor dx = torch::addcmul(d.view({1, c, 1, 1}), x, slope.view({1, c, 1, 1}));
    dx.addcmul_(g, a.view({1, c, 1, 1}));
    return {dx,
            sum_gx,
            sum_g,
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor()};
  }
};

}  // namespace

FcLayerImpl::FcLayerImpl(int64_t in_features, int64_t out_features) {
  // PyTorch's nn.Linear initialisation, so the models match theirs.
  weight = register_parameter("weight", torch::empty({out_features, in_features}));
  bias = register_parameter("bias", torch::empty({out_features}));
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  bias.uniform_(-bound, bound);
}

torch::Tensor FcLayerImpl::forward(const torch::Tensor& x) {
  if (sink_ && is_training()) return SfbLinearFunction::apply(x, weight, bias, AsHandle(&sink_));
  return torch::addmm(bias, x, weight.t());
}

BatchNorm2dImpl::BatchNorm2dImpl(int64_t channels, double momentum, double eps)
    : momentum_(momentum), eps_(eps) {
  weight = register_parameter("weight", torch::ones({channels}));
  bias = register_parameter("bias", torch::zeros({channels}));
  running_mean = register_buffer("running_mean", torch::zeros({channels}));
  running_var = register_buffer("running_var", torch::ones({channels}));
}

torch::Tensor BatchNorm2dImpl::forward(const torch::Tensor& x) {
  if (reducer_ && is_training()) {
    return SyncBatchNormFunction::apply(x, weight, bias, running_mean, running_var, momentum_, eps_,
                                        AsHandle(&reducer_));
  }
  return torch::batch_norm(x, weight, bias, running_mean, running_var, is_training(), momentum_, eps_,
                           /*cudnn_enabled=*/false);
}

}  // namespace parasol::dl
