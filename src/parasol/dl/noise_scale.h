// The gradient noise scale a training job measures of itself (McCandlish et al.'s B_simple, as
// Pollux smooths it) and AdaScale's learning-rate gain, from the squared norms GradSync reports.
//
// With n gradients of b samples each and their mean (total batch B = n b), for the true gradient
// G and one sample's gradient covariance S:  E|g_i|^2 = |G|^2 + tr(S)/b  and
// E|mean|^2 = |G|^2 + tr(S)/B, so
//   tr(S) = (mean_i |g_i|^2 - |mean|^2) / (1/b - 1/B),   |G|^2 = |mean|^2 - tr(S)/B.
// Both are unbiased but noisy per step: they are smoothed by exponential moving averages (decay
// smoothing^(B/B0) per step, so a larger batch, which sees more samples per step, forgets faster)
// and the averages debiased for their start, as Pollux does. The optimizer is plain SGD (momentum
// and LARS aside), so the preconditioner is the identity.
//
// Libtorch-free (plain numbers), so it is tested without it.
// Threading: one thread (the training thread of rank 0 or every rank; every rank gets the same
// numbers).
#pragma once

#include <cstdint>

namespace parasol::dl {

// What a gradient noise scale is estimated from (Pollux, McCandlish et al.): `count` gradients of
// `local_batch` samples each (the ranks' gradients before averaging; on one rank, two consecutive
// steps' gradients) and their mean.
struct GradientNorms {
  int64_t step = -1;     // the (last) step measured; -1: none yet
  double local_sqr = 0;  // mean over the gradients of |g_i|^2
  double total_sqr = 0;  // |mean of the g_i|^2
  int count = 0;
  int64_t local_batch = 0;
};

class NoiseScale {
 public:
  // `base_batch`: the total batch the job's learning rate is set for (B0).
  explicit NoiseScale(int64_t base_batch, double smoothing = 0.999);

  // One step's norms (count >= 2; ignored otherwise, and so is the step last added again).
  void Add(const GradientNorms& norms);

  bool measured() const { return weight_ > 0; }
  // |G|^2, never below a tiny positive number (the raw estimate can be negative when noise dominates).
  double grad_sqr() const;
  // tr(S) / batch: the variance of a gradient over `batch` samples; never negative.
  double grad_var(double batch) const;
  // B_simple = tr(S) / |G|^2 in samples: batches well below it are noise-dominated.
  double noise_scale() const { return grad_var(1) / grad_sqr(); }
  // AdaScale's gain at total batch `batch`: (v + s) / (v / r + s) with r = batch / B0, v the
  // variance at B0 and s |G|^2. 1 at B0, up to r when noise dominates, 1 when it does not. 1
  // before any measurement.
  double Gain(double batch) const;

  // For checkpoints: the smoothed sums and their weight.
  struct State {
    double sqr_sum = 0, var_sum = 0, weight = 0;
  };
  State state() const { return {sqr_sum_, var_sum_, weight_}; }
  void Restore(const State& s);

 private:
  double base_batch_;
  double smoothing_;
  double sqr_sum_ = 0, var_sum_ = 0, weight_ = 0;  // var_sum_: of tr(S)
  int64_t last_step_ = -1;
};

}  // namespace parasol::dl
