// The scheduling policies' common interface: at every interval a policy sees the active jobs and
// the current allocations and returns the new ones.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "parasol/sched/sim_job.h"

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

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // `active`: submitted, unfinished jobs in submission order. Returns every active job's
  // allocation (absent or empty: no GPUs). Adaptive policies may also set batch sizes through
  // `SetBatch` after the simulator reallocates (see Simulate).
  virtual Allocations Optimize(double now, const std::vector<SimJob*>& active, const Allocations& previous,
                               const ClusterSpec& cluster) = 0;
};

}  // namespace parasol::sched
