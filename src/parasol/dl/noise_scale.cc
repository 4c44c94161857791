#include "parasol/dl/noise_scale.h"

#include <algorithm>
#include <cmath>

#include "parasol/core/error.h"

namespace parasol::dl {
namespace {

constexpr double kMinSqr = 1e-30;

}  // namespace

NoiseScale::NoiseScale(int64_t base_batch, double smoothing)
    : base_batch_(static_cast<double>(base_batch)), smoothing_(smoothing) {
  if (base_batch <= 0 || !(smoothing >= 0 && smoothing < 1)) {
    throw InvalidArgumentError("noise scale: base batch must be positive and smoothing in [0, 1)");
  }
}

void NoiseScale::Add(const GradientNorms& n) {
  if (n.count < 2 || n.local_batch <= 0 || n.step == last_step_) return;
  last_step_ = n.step;
  const double b = static_cast<double>(n.local_batch), big_b = b * n.count;
  const double trace = (n.local_sqr - n.total_sqr) / (1 / b - 1 / big_b);
  const double sqr = n.total_sqr - trace / big_b;
  if (!std::isfinite(trace) || !std::isfinite(sqr)) return;
  const double theta = std::pow(smoothing_, big_b / base_batch_);
  sqr_sum_ = theta * sqr_sum_ + (1 - theta) * sqr;
  var_sum_ = theta * var_sum_ + (1 - theta) * trace;
  weight_ = theta * weight_ + (1 - theta);
}

double NoiseScale::grad_sqr() const { return measured() ? std::max(sqr_sum_ / weight_, kMinSqr) : kMinSqr; }

double NoiseScale::grad_var(double batch) const {
  return measured() ? std::max(var_sum_ / weight_, 0.0) / batch : 0.0;
}

double NoiseScale::Gain(double batch) const {
  if (!measured()) return 1.0;
  const double r = batch / base_batch_, v = grad_var(base_batch_), s = grad_sqr();
  return (v + s) / (v / r + s);
}

void NoiseScale::Restore(const State& s) {
  sqr_sum_ = s.sqr_sum;
  var_sum_ = s.var_sum;
  weight_ = s.weight;
}

}  // namespace parasol::dl
