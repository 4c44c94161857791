// The scheduling policies' common interface: at every interval a policy sees the active jobs and
// the current allocations and returns the new ones.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "parasol/sched/job.h"

namespace parasol::sched {

struct ClusterSpec {
  int nodes = 16;
  int gpus_per_node = 4;
};

// A job's GPUs as the node index of each, grouped by node.
using Allocation = std::vector<int>;
using Allocations = std::map<std::string, Allocation>;

// GPUs per node of an allocation, in the order its nodes first appear.
std::vector<int> PlacementOf(const Allocation& allocation);
// Packs each job (in `order`, with its GPU count) that has no allocation yet onto the nodes with
// the most free GPUs (lowest index on ties), as Tiresias and Optimus place jobs.
void PackMostFree(const std::vector<std::pair<std::string, int>>& order, Allocations& alloc,
                  const ClusterSpec& cluster);

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // `active`: submitted, unfinished jobs in submission order (simulated or live). Returns every active job's
  // allocation (absent or empty: no GPUs). Adaptive policies may also set batch sizes through
  // `SetBatch` after the simulator reallocates (see SimulateCluster).
  virtual Allocations Optimize(double now, const std::vector<const Job*>& active, const Allocations& previous,
                               const ClusterSpec& cluster) = 0;
};

}  // namespace parasol::sched
