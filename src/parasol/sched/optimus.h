// Optimus with an oracle of remaining work: jobs keep the batch size their users asked for; every
// job gets one GPU if there are enough, then GPUs go one at a time to the job whose remaining time
// (remaining iterations x step time, both known exactly from the profiles: the oracle) falls most
// with one more GPU; placements pack onto the nodes with the most free GPUs, smallest jobs first,
// and a job whose GPU count is unchanged keeps its GPUs. Simulated jobs only (the oracle is their
// profile); others are refused with InvalidArgumentError.
#pragma once

#include <string>
#include <vector>

#include "parasol/sched/policy.h"
#include "parasol/sched/sim_job.h"

namespace parasol::sched {

class OptimusPolicy : public Policy {
 public:
  std::string name() const override { return "optimus"; }
  Allocations Optimize(double now, const std::vector<const Job*>& active, const Allocations& previous,
                       const ClusterSpec& cluster) override;
  // Seconds per update of `job` at its batch size on `replicas` GPUs packed 4 per node.
  static double PredictStepTime(const SimJob& job, int replicas, int gpus_per_node);
  // Most GPUs the job can use: its batch over the smallest per-GPU batch (1 for ncf).
  static int MaxReplicas(const SimJob& job);
};

}  // namespace parasol::sched
