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

#include <span>

namespace parasol::sched {

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

  double StepTime(int nodes, int replicas, double atomic_bsz, int accum_steps) const;
  double Throughput(int nodes, int replicas, double atomic_bsz, int accum_steps) const;  // samples/s
  double Efficiency(double batch) const;
  double Goodput(int nodes, int replicas, double atomic_bsz, int accum_steps) const {
    return Throughput(nodes, replicas, atomic_bsz, accum_steps) * Efficiency(replicas * atomic_bsz * (accum_steps + 1));
  }

  struct Choice {
    double goodput = 0;
    int atomic_bsz = 0;
    int accum_steps = 0;
  };
  // The best of 50 total batch sizes spaced geometrically from max(init, min_atomic * replicas)
  // to max_batch, each split into per-GPU batches within [min_atomic, max_atomic] (more
  // accumulation steps when one does not fit; at least one step on a single GPU above the initial
  // batch, whose gradient statistics need two). goodput 0 when nothing fits.
  Choice Optimize(int nodes, int replicas, int max_batch, int min_atomic, int max_atomic) const;

 private:
  PerfParams p_;
  double sqr_, var_;
  int init_batch_;
};

}  // namespace parasol::sched
