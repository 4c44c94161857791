#include "parasol/dl/noise_scale.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace parasol::dl {
namespace {

// A quadratic problem with known gradient noise: sample s has loss |w - x_s|^2 / 2 with
// x_s ~ N(mu, sigma^2 I) in d dimensions, so its gradient is w - x_s, the true gradient G = w - mu
// and tr(S) = d sigma^2. Each step draws `ranks` x `local_batch` samples and reports the norms of
// the ranks' mean gradients and of their mean, as GradSync would.
class Quadratic {
 public:
  Quadratic(int d, double sigma, double g_per_coordinate, uint64_t seed)
      : d_(d), sigma_(sigma), g_(g_per_coordinate), rng_(seed) {}
  double true_sqr() const { return d_ * g_ * g_; }
  double true_trace() const { return d_ * sigma_ * sigma_; }

  GradientNorms Step(int64_t step, int ranks, int local_batch) {
    std::normal_distribution<double> noise(0, sigma_);
    std::vector<double> mean(static_cast<size_t>(d_), 0.0);
    GradientNorms n{.step = step, .count = ranks, .local_batch = local_batch};
    for (int r = 0; r < ranks; ++r) {
      double sqr = 0;
      for (int k = 0; k < d_; ++k) {
        double g = 0;
        for (int s = 0; s < local_batch; ++s) g += g_ - noise(rng_);  // w - x_s, with w - mu = g_
        g /= local_batch;
        sqr += g * g;
        mean[static_cast<size_t>(k)] += g / ranks;
      }
      n.local_sqr += sqr / ranks;
    }
    for (double m : mean) n.total_sqr += m * m;
    return n;
  }

 private:
  int d_;
  double sigma_, g_;
  std::mt19937_64 rng_;
};

TEST(NoiseScale, RecoversTheKnownNoiseOfAQuadraticFromRanks) {
  Quadratic q(40, 1.5, 0.5, 7);  // |G|^2 = 10, tr(S) = 90: noise scale 9 samples
  NoiseScale ns(/*base_batch=*/32);
  for (int64_t step = 0; step < 3000; ++step) ns.Add(q.Step(step, 4, 8));
  EXPECT_NEAR(ns.grad_sqr(), q.true_sqr(), 0.1 * q.true_sqr());
  EXPECT_NEAR(ns.grad_var(1), q.true_trace(), 0.1 * q.true_trace());
  EXPECT_NEAR(ns.noise_scale(), q.true_trace() / q.true_sqr(), 0.1 * q.true_trace() / q.true_sqr());
  EXPECT_NEAR(ns.grad_var(32), q.true_trace() / 32, 0.1 * q.true_trace() / 32);
}

// One rank pairs consecutive steps' gradients (count 2) of 64 samples each; the noise dominates
// (noise scale 400 samples).
TEST(NoiseScale, RecoversTheKnownNoiseFromPairsOfSteps) {
  Quadratic q(20, 2.0, 0.1, 11);  // |G|^2 = 0.2, tr(S) = 80
  NoiseScale ns(/*base_batch=*/128);
  for (int64_t step = 0; step < 3000; ++step) ns.Add(q.Step(step, 2, 64));
  EXPECT_NEAR(ns.grad_sqr(), q.true_sqr(), 0.1 * q.true_sqr());
  EXPECT_NEAR(ns.grad_var(1), q.true_trace(), 0.1 * q.true_trace());
}

// Norms exactly at their expectations give back the inputs, and the gain follows AdaScale's
// formula (v + s) / (v / r + s), v the variance at the base batch, r the batch over it.
TEST(NoiseScale, GainFollowsAdaScale) {
  const double s = 2.0, trace = 96.0;  // v at the base batch 32: 3
  NoiseScale ns(32);
  EXPECT_DOUBLE_EQ(ns.Gain(128), 1.0);  // nothing measured: no scaling
  ns.Add({.step = 0, .local_sqr = s + trace / 8, .total_sqr = s + trace / 32, .count = 4, .local_batch = 8});
  EXPECT_NEAR(ns.grad_sqr(), s, 1e-9);
  EXPECT_NEAR(ns.grad_var(32), 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(ns.Gain(32), 1.0);
  EXPECT_NEAR(ns.Gain(128), (3.0 + 2.0) / (3.0 / 4 + 2.0), 1e-9);
  EXPECT_NEAR(ns.Gain(64), (3.0 + 2.0) / (3.0 / 2 + 2.0), 1e-9);
  // The same step reported twice counts once: the estimate does not move.
  ns.Add({.step = 0, .local_sqr = 1e6, .total_sqr = 0, .count = 4, .local_batch = 8});
  EXPECT_NEAR(ns.grad_sqr(), s, 1e-9);
  // Pure noise: the gain is the scale itself; no noise: 1.
  NoiseScale noisy(32), quiet(32);
  noisy.Add({.step = 0, .local_sqr = trace / 8, .total_sqr = trace / 32, .count = 4, .local_batch = 8});
  quiet.Add({.step = 0, .local_sqr = s, .total_sqr = s, .count = 4, .local_batch = 8});
  EXPECT_NEAR(noisy.Gain(128), 4.0, 1e-6);
  EXPECT_NEAR(quiet.Gain(128), 1.0, 1e-12);
}

}  // namespace
}  // namespace parasol::dl
