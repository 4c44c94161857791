#include "parasol/sched/goodput.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace parasol::sched {
namespace {

// Observations made from known parameters over a spread of placements and batches: the fit
// predicts every one of them closely and recovers the compute and network terms.
TEST(Goodput, FitRecoversKnownParameters) {
  const PerfParams truth{0.05, 0.002, 0.2, 0.01, 0.04, 0.002, 2.0};
  GoodputModel model(truth, 1, 1, 32);
  std::vector<PerfObservation> obs;
  for (auto [nodes, replicas] :
       std::vector<std::pair<int, int>>{{1, 1}, {1, 2}, {1, 4}, {2, 8}, {4, 16}, {2, 4}}) {
    for (double bsz : {16.0, 32.0, 64.0, 128.0}) {
      const double compute = truth.alpha_c + truth.beta_c * bsz;
      obs.push_back({nodes, replicas, bsz, compute, model.StepTime(nodes, replicas, bsz, 0)});
    }
  }
  const PerfParams fit = FitPerfParams(obs);
  GoodputModel fitted(fit, 1, 1, 32);
  for (const PerfObservation& o : obs) {
    EXPECT_NEAR(fitted.StepTime(o.nodes, o.replicas, o.atomic_bsz, 0) / o.step_time, 1.0, 0.03)
        << o.nodes << "x" << o.replicas << " @" << o.atomic_bsz;
  }
  EXPECT_NEAR(fit.alpha_c, truth.alpha_c, 0.1 * truth.alpha_c);
  EXPECT_NEAR(fit.beta_c, truth.beta_c, 0.1 * truth.beta_c);
  EXPECT_NEAR(fit.alpha_n, truth.alpha_n, 0.25 * truth.alpha_n);
}

// A live job's first measurements: one rank, a few batches, milliseconds a step (an MLP on one
// core: 4.4 ms + 0.07 ms a sample). The fit follows the compute line; a compute time flat in the
// batch would make every larger batch look free.
TEST(Goodput, FitFollowsAFewFastStepsOnOneRank) {
  std::vector<PerfObservation> obs;
  for (double bsz : {64.0, 128.0, 256.0}) {
    const double t = 0.0044 + 0.00007 * bsz;
    obs.push_back({1, 1, bsz, t, t});
  }
  const PerfParams fit = FitPerfParams(obs);
  EXPECT_NEAR(fit.beta_c, 0.00007, 0.1 * 0.00007);
  EXPECT_NEAR(fit.alpha_c, 0.0044, 0.1 * 0.0044);
  const GoodputModel model(fit, 1, 0, 64);  // no noise: only the throughput counts
  EXPECT_NEAR(model.StepTime(1, 1, 1024, 0) / (0.0044 + 0.00007 * 1024), 1.0, 0.1);
}

// Efficiency is 1 at the initial batch and falls once the batch passes the noise scale
// (var / sqr * B0 = 4 x 32 = 128 here).
TEST(Goodput, EfficiencyFallsPastTheNoiseScale) {
  GoodputModel m(PerfParams{}, 1.0, 4.0, 32);
  EXPECT_DOUBLE_EQ(m.Efficiency(32), 1.0);
  EXPECT_GT(m.Efficiency(64), 0.75);
  EXPECT_LT(m.Efficiency(1024), 0.2);
  for (double b = 32; b < 4096; b *= 2) EXPECT_GT(m.Efficiency(b), m.Efficiency(2 * b));
  GoodputModel quiet(PerfParams{}, 1.0, 0.0, 32);  // no noise: a bigger batch is worth nothing more
  EXPECT_NEAR(quiet.Efficiency(320), 0.1, 1e-12);
}

// The optimiser keeps per-GPU batches within limits, accumulates when the batch needs it, and
// with a noisy gradient (large noise scale) takes the largest batch, with a quiet one the smallest.
TEST(Goodput, OptimiserRespectsPerGpuLimits) {
  const PerfParams p{0.05, 0.002, 0.2, 0.01, 0.04, 0.002, 2.0};
  GoodputModel noisy(p, 1.0, 1000.0, 32);
  auto c = noisy.Optimize(1, 2, 1024, 8, 64);
  EXPECT_GE(c.atomic_bsz, 8);
  EXPECT_LE(c.atomic_bsz, 64);
  // Accumulation only when a GPU's share exceeds what it holds: the per-GPU batch is then full-ish.
  if (c.accum_steps > 0) {
    EXPECT_GT(c.atomic_bsz * (c.accum_steps + 1), 64);
  }
  GoodputModel quiet(p, 1.0, 0.01, 32);
  auto q = quiet.Optimize(1, 2, 1024, 8, 64);
  EXPECT_EQ(2 * q.atomic_bsz * (q.accum_steps + 1), 32);  // the smallest batch: bigger ones waste samples
  EXPECT_GE(c.atomic_bsz * (c.accum_steps + 1), 4 * q.atomic_bsz * (q.accum_steps + 1));
  EXPECT_EQ(noisy.Optimize(1, 64, 1024, 32, 64).goodput, 0.0);  // 64 x 32 exceeds the largest batch
}

// Measurements at a shape the fitted form gets wrong (two nodes 60% slower than the form says):
// the corrected model reproduces them, interpolates between the measured batches in log batch,
// holds the nearest outside them, and leaves shapes it has not measured to the form.
TEST(Goodput, OwnMeasurementsOverrideTheFittedForm) {
  const PerfParams p{0.05, 0.002, 0.2, 0.01, 0.04, 0.002, 1.0};
  GoodputModel plain(p, 1, 1, 32);
  std::vector<PerfObservation> obs;
  for (double bsz : {16.0, 64.0}) {
    const double t = plain.StepTime(2, 8, bsz, 0) * (bsz == 16 ? 1.6 : 1.2);
    obs.push_back({2, 8, bsz, 0.05 + 0.002 * bsz, t});
  }
  GoodputModel corrected(p, 1, 1, 32);
  corrected.SetCorrections(GoodputModel::MeasuredCorrections(p, obs));
  EXPECT_NEAR(corrected.StepTime(2, 8, 16, 0), obs[0].step_time, 1e-12);
  EXPECT_NEAR(corrected.StepTime(2, 8, 64, 0), obs[1].step_time, 1e-12);
  // Halfway in log batch (32): the ratio is the geometric mean of 1.6 and 1.2.
  EXPECT_NEAR(corrected.StepTime(2, 8, 32, 0) / plain.StepTime(2, 8, 32, 0), std::sqrt(1.6 * 1.2), 1e-12);
  EXPECT_NEAR(corrected.StepTime(2, 8, 128, 0) / plain.StepTime(2, 8, 128, 0), 1.2, 1e-12);
  EXPECT_NEAR(corrected.StepTime(2, 8, 64, 2) / plain.StepTime(2, 8, 64, 2), 1.2, 1e-12);  // whole iteration
  EXPECT_DOUBLE_EQ(corrected.StepTime(3, 12, 64, 0), plain.StepTime(3, 12, 64, 0));
  EXPECT_DOUBLE_EQ(corrected.StepTime(1, 4, 64, 0), plain.StepTime(1, 4, 64, 0));
}

}  // namespace
}  // namespace parasol::sched
