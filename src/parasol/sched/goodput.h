// A job's goodput model (the Pollux idea): throughput from a fitted model of iteration time, and
// statistical efficiency from the gradient noise scale; goodput = throughput x efficiency, and
// the batch size and accumulation steps for an allocation are chosen to maximise it.
//
// Iteration time: compute T_c = alpha_c + beta_c * atomic_bsz per pass; synchronisation
// T_s = alpha + beta * max(replicas - 2, 0) with (alpha_n, beta_n) when the job spans nodes and
// (alpha_r, beta_r) when its replicas share one node (none for one replica); the last pass
// overlaps synchronisation: (T_c^gamma + T_s^gamma)^(1/gamma), gamma in [1, 10]; with k
// accumulation steps an iteration takes k T_c + that.
// Efficiency at total batch B (initial batch B0, gradient squared norm |g|^2 and variance s^2):
// scale = B / B0, gain = (s^2 + |g|^2) / (s^2 / scale + |g|^2) (AdaScale), efficiency = gain /
// scale: 1 at B0, falling once B passes the noise scale s^2 / |g|^2 * B0.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace parasol::sched {

// AdaScale's gain: progress per iteration at `scale` times the initial batch, relative to one
// iteration at the initial batch (1 when the gradient has no noise; `scale` when it is all noise).
inline double AdaScaleGain(double grad_sqr, double grad_var, double scale) {
  const double denom = grad_var / scale + grad_sqr;
  return denom > 0 ? (grad_var + grad_sqr) / denom : 1.0;
}

// A GPU's share `local` of the total batch as passes of `atomic` samples with `accum` extra
// (accumulation) steps: as few steps as keep a pass within `max_atomic`, at least one when
// `accumulate` (one GPU above the initial batch: its gradient statistics need two passes).
struct BatchSplit {
  int atomic = 0;
  int accum = 0;
};
inline BatchSplit SplitLocalBatch(double local, int max_atomic, bool accumulate) {
  int accum = static_cast<int>(std::ceil(local / max_atomic - 1e-8)) - 1;
  if (accumulate) accum = std::max(accum, 1);
  return {static_cast<int>(std::ceil(local / (accum + 1) - 1e-8)), accum};
}

struct PerfParams {
  double alpha_c = 0.1, beta_c = 0.01;
  double alpha_n = 0.1, beta_n = 0.01;
  double alpha_r = 0.1, beta_r = 0.01;
  double gamma = 1.0;
};

struct PerfObservation {
  int nodes = 1, replicas = 1;
  double atomic_bsz = 0;
  double compute_time = 0;  // one pass (step time minus sync time)
  double step_time = 0;     // one iteration without accumulation
};

// Least squares on log times (compute and step) with a small pull of gamma towards 1 and of the
// retrogression terms towards 0; parameters the observations cannot identify are held at
// neutral values (one batch size: alpha_c = half the compute time; no multi-node run: inter-node
// terms at least 1.1x the intra-node ones; no run above 2 replicas: no retrogression).
PerfParams FitPerfParams(std::span<const PerfObservation> observations);

class GoodputModel {
 public:
  GoodputModel(const PerfParams& perf, double grad_sqr, double grad_var, int init_batch)
      : p_(perf), sqr_(grad_sqr), var_(grad_var), init_batch_(init_batch) {}

  // The job's own measurements override the fitted form where they exist: iterations at a
  // measured (nodes, replicas) shape are scaled by measured / modelled time, interpolated in
  // log batch between the measured batches (the nearest outside them). A rigid form fitted over
  // many shapes can be 40% off at one of them (profiles are not smooth in the node count), and a
  // job would otherwise stay on a shape its model wrongly favours.
  using Corrections =
      std::map<std::pair<int, int>, std::vector<std::pair<double, double>>>;  // (bsz, log ratio)
  void SetCorrections(Corrections c) { corrections_ = std::move(c); }
  static Corrections MeasuredCorrections(const PerfParams& perf,
                                         std::span<const PerfObservation> observations);

  double StepTime(int nodes, int replicas, double atomic_bsz, int accum_steps) const;
  double Throughput(int nodes, int replicas, double atomic_bsz, int accum_steps) const;  // samples/s
  double Efficiency(double batch) const;
  double Goodput(int nodes, int replicas, double atomic_bsz, int accum_steps) const {
    return Throughput(nodes, replicas, atomic_bsz, accum_steps) *
           Efficiency(replicas * atomic_bsz * (accum_steps + 1));
  }

  struct Choice {
    double goodput = 0;
    int atomic_bsz = 0;
    int accum_steps = 0;
  };
  // The best of 50 total batch sizes spaced geometrically from max(init, min_atomic * replicas)
  // to max_batch, each split into per-GPU batches within [min_atomic, max_atomic] (more
  // accumulation steps when one does not fit; at least one step on a single GPU above the initial
  // batch, whose gradient statistics need two). goodput 0 when nothing fits. A job that cannot
  // `accumulate` runs every batch in one pass (one GPU measures its noise from consecutive steps
  // instead).
  Choice Optimize(int nodes, int replicas, int max_batch, int min_atomic, int max_atomic,
                  bool accumulate = true) const;

 private:
  PerfParams p_;
  double sqr_, var_;
  int init_batch_;
  Corrections corrections_;
};

}  // namespace parasol::sched
