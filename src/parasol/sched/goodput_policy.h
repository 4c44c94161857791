// The goodput policy: every interval it gives GPUs to the jobs where they add the most
// fairness-weighted goodput, and each job then picks the batch size its goodput model says is
// best for what it got.
//
// Objective: maximise sum_j w_j * s_j(c_j), where s_j(c) is job j's speedup with c GPUs over one
// GPU (goodput of the best batch for that allocation, from the job's fitted model; a job not yet
// measured can use one GPU), discounted for a running job whose count would change by the restart
// it costs (H / (H + penalty), H = min(age, horizon, its time left at the current count); the
// penalty is the option or what the job's restarts have cost, whichever is more), and w_j = 1 / (1 +
// R_j / scale) favours jobs with little work left (R_j: the epochs left, which users declare, at the job's
// modelled one-GPU goodput; shortest-remaining-first minimises mean completion time). Allocations are whole
// counts of 1-4 GPUs on one node, or whole nodes (so no node hosts two distributed jobs). The
// counts come from a greedy over each job's concave envelope or an exact knapsack (see
// count_search.h), milliseconds for hundreds of jobs where the published scheduler ran a genetic
// search; then placement keeps unchanged jobs where they are and packs the rest.
#pragma once

#include <string>
#include <vector>

#include "parasol/sched/policy.h"

namespace parasol::sched {

struct GoodputPolicyOptions {
  double restart_penalty_s = 30;
  // A new allocation is assumed to hold as long as the job has existed (its age), at most
  // horizon_s and at least min_hold_s (the restart's cost is weighed against it). The live cluster
  // sets min_hold_s to its interval: without it a job that has just measured itself would wait a
  // whole interval on one GPU with others free.
  double horizon_s = 300;
  double min_hold_s = 0;
  // Weights: by remaining work, halved at this many seconds of 1-GPU work left (0: off) ...
  double remaining_scale_s = 36000;
  // ... or by attained service, halved at this many GPU-seconds (0: off).
  double service_scale_gpu_s = 0;
  // Counts by the exact knapsack instead of the greedy (see count_search.h).
  bool exact_search = false;
};

class GoodputPolicy : public Policy {
 public:
  explicit GoodputPolicy(GoodputPolicyOptions o = {}) : o_(o) {}
  std::string name() const override { return "goodput"; }
  Allocations Optimize(double now, const std::vector<const Job*>& active, const Allocations& previous,
                       const ClusterSpec& cluster) override;

  // The counts a job may get (0, 1..per node, then whole nodes) and its speedup at each.
  struct Curve {
    std::vector<int> counts;
    std::vector<double> speedup;
    double one_gpu_goodput = 0;  // the base of the speedups (0: not measured yet)
  };
  static Curve SpeedupCurve(const Job& job, const ClusterSpec& cluster);

 private:
  double Weight(const Job& job, const Curve& curve) const;

  GoodputPolicyOptions o_;
};

}  // namespace parasol::sched
