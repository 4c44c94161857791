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
// rank, so N ranks with batch B match one rank with batch N x B.
class SyncBatchNormFunction : public torch::autograd::Function<SyncBatchNormFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& b, torch::Tensor running_mean, torch::Tensor running_var,
                               double momentum, double eps, int64_t reducer) {
    const int64_t c = x.size(1);
    const StatsReducer& reduce = *FromHandle<const StatsReducer>(reducer);
    torch::Tensor xd = x.to(torch::kFloat64);
    torch::Tensor sums = torch::cat({xd.sum({0, 2, 3}), (xd * xd).sum({0, 2, 3}),
                                     torch::full({1}, static_cast<double>(x.numel() / c), torch::kFloat64)});
    reduce(sums);
    const double n = sums[2 * c].item<double>();
    torch::Tensor mean = sums.narrow(0, 0, c) / n;
    torch::Tensor var = (sums.narrow(0, c, c) / n - mean * mean).clamp_min(0);
    torch::Tensor invstd = (var + eps).rsqrt().to(torch::kFloat32);
    torch::NoGradGuard no_grad;
    running_mean.mul_(1 - momentum).add_(mean.to(torch::kFloat32), momentum);
    running_var.mul_(1 - momentum).add_((var * (n / std::max(n - 1, 1.0))).to(torch::kFloat32), momentum);
    torch::Tensor xhat = (x - mean.to(torch::kFloat32).view({1, c, 1, 1})) * invstd.view({1, c, 1, 1});
    ctx->save_for_backward({xhat, invstd, w});
    ctx->saved_data["reducer"] = reducer;
    ctx->saved_data["n"] = n;
    return xhat * w.view({1, c, 1, 1}) + b.view({1, c, 1, 1});
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor& xhat = saved[0];
    const int64_t c = xhat.size(1);
    const torch::Tensor g = grad_outputs[0];
    torch::Tensor sum_g = g.sum({0, 2, 3});
    torch::Tensor sum_gx = (g * xhat).sum({0, 2, 3});
    torch::Tensor sums = torch::cat({sum_g, sum_gx}).to(torch::kFloat64);
    (*FromHandle<const StatsReducer>(ctx->saved_data["reducer"]))(sums);
    const double n = ctx->saved_data["n"].toDouble();
    torch::Tensor mean_g = (sums.narrow(0, 0, c) / n).to(torch::kFloat32).view({1, c, 1, 1});
    torch::Tensor mean_gx = (sums.narrow(0, c, c) / n).to(torch::kFloat32).view({1, c, 1, 1});
    torch::Tensor scale = (saved[2] * saved[1]).view({1, c, 1, 1});
    torch::Tensor dx = scale * (g - mean_g - xhat * mean_gx);
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
