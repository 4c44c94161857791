#include "parasol/dl/optimizer.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace parasol::dl {

FlatParameters FlattenParameters(const std::vector<std::pair<torch::Tensor, int>>& params, bool views) {
  FlatParameters flat;
  int64_t total = 0;
  for (const auto& [p, stage] : params) {
    flat.spans.push_back({.begin = total, .numel = p.numel(), .stage = stage, .matrix = p.dim() > 1});
    total += p.numel();
  }
  flat.params = torch::empty({total});
  flat.grads = torch::zeros({total});
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    torch::Tensor p = params[i].first;
    const ParamSpan& s = flat.spans[i];
    flat.params.narrow(0, s.begin, s.numel).copy_(p.detach().reshape(-1));
    if (!views) continue;
    p.set_data(flat.params.narrow(0, s.begin, s.numel).view(p.sizes()));
    p.mutable_grad() = flat.grads.narrow(0, s.begin, s.numel).view(p.sizes());
  }
  return flat;
}

Optimizer::Optimizer(OptimizerOptions options, torch::Tensor params, torch::Tensor grads,
                     std::vector<ParamSpan> spans)
    : options_(options), params_(std::move(params)), grads_(std::move(grads)), spans_(std::move(spans)) {
  // An external optimizer keeps its own state.
  momentum_ = options_.kind == OptimizerKind::kExternal ? torch::zeros({0}) : torch::zeros_like(params_);
  if (options_.kind == OptimizerKind::kAdam) second_ = torch::zeros_like(params_);
  set_step(0);
}

double Optimizer::LearningRate(int64_t step) const {
  if (options_.warmup_steps > 0 && step < options_.warmup_steps) {
    return options_.lr * static_cast<double>(step + 1) / static_cast<double>(options_.warmup_steps);
  }
  if (options_.cosine_steps <= options_.warmup_steps) return options_.lr;
  const double t = static_cast<double>(std::min(step, options_.cosine_steps) - options_.warmup_steps) /
                   static_cast<double>(options_.cosine_steps - options_.warmup_steps);
  return options_.lr * 0.5 * (1 + std::cos(std::numbers::pi * t));
}

double Optimizer::TrustRatio(double w_norm2, double g_norm2) const {
  const double w = std::sqrt(w_norm2), g = std::sqrt(g_norm2);
  const double denom = g + options_.weight_decay * w;
  return (w > 0 && denom > 0) ? options_.lars_eta * w / denom : 1.0;
}

void Optimizer::UpdateParam(int i) {
  const ParamSpan& s = spans_[i];
  double trust = 1.0;
  if (options_.lars && s.matrix) {
    const double w2 = params_.narrow(0, s.begin, s.numel).pow(2).sum().item<double>();
    const double g2 = grads_.narrow(0, s.begin, s.numel).pow(2).sum().item<double>();
    trust = TrustRatio(w2, g2);
  }
  Apply(s.begin, s.end(), trust);
}

void Optimizer::UpdateRange(int64_t begin, int64_t end, const std::vector<double>& trust) {
  // Spans are sorted; visit the ones that overlap [begin, end).
  auto it = std::upper_bound(spans_.begin(), spans_.end(), begin,
                             [](int64_t b, const ParamSpan& s) { return b < s.end(); });
  for (; it != spans_.end() && it->begin < end; ++it) {
    const int i = static_cast<int>(it - spans_.begin());
    const double t = (options_.lars && it->matrix) ? trust.at(i) : 1.0;
    Apply(std::max(begin, it->begin), std::min(end, it->end()), t);
  }
}

// PyTorch's SGD: g += wd * w; buf = m * buf + g (buf = g at the first step, which the zero
// buffer gives too when m * 0 = 0); w -= lr * buf. LARS scales g by the trust ratio first.
void Optimizer::Apply(int64_t begin, int64_t end, double trust) {
  if (end <= begin || options_.kind == OptimizerKind::kExternal) return;
  if (options_.kind == OptimizerKind::kAdam) return ApplyAdam(begin, end);
  torch::NoGradGuard no_grad;
  torch::Tensor w = params_.narrow(0, begin, end - begin);
  torch::Tensor g = grads_.narrow(0, begin, end - begin);
  torch::Tensor buf = momentum_.narrow(0, begin, end - begin);
  if (options_.weight_decay != 0) g.add_(w, options_.weight_decay);
  if (trust != 1.0) g.mul_(trust);
  if (options_.momentum != 0) {
    buf.mul_(options_.momentum).add_(g);
    w.add_(buf, -lr_);
  } else {
    w.add_(g, -lr_);
  }
}

// torch.optim.AdamW: w *= 1 - lr wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// w -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps). One pass over the four arrays (as
// tensor operations it was seven passes and a temporary: a fifth of a Tree-LSTM step, whose
// embedding table is most of the parameters); optimizer.cc is compiled without errno for sqrt, so
// the loop vectorises.
void Optimizer::ApplyAdam(int64_t begin, int64_t end) {
  const double b1 = options_.adam_beta1, b2 = options_.adam_beta2;
  const auto t = static_cast<double>(adam_t_);
  const auto decay = static_cast<float>(1 - lr_ * options_.weight_decay);
  const auto step = static_cast<float>(lr_ / (1 - std::pow(b1, t)));
  const auto unbias2 = static_cast<float>(1 / (1 - std::pow(b2, t)));
  const auto eps = static_cast<float>(options_.adam_eps), fb1 = static_cast<float>(b1),
             fb2 = static_cast<float>(b2);
  float* w = params_.data_ptr<float>() + begin;
  const float* g = grads_.data_ptr<float>() + begin;
  float* m = momentum_.data_ptr<float>() + begin;
  float* v = second_.data_ptr<float>() + begin;
  const int64_t n = end - begin;
  for (int64_t i = 0; i < n; ++i) {
    m[i] = fb1 * m[i] + (1 - fb1) * g[i];
    v[i] = fb2 * v[i] + (1 - fb2) * g[i] * g[i];
    w[i] = w[i] * decay - step * m[i] / (std::sqrt(v[i] * unbias2) + eps);
  }
}

}  // namespace parasol::dl
