// Tiresias (discretised two-queue least-attained-service): jobs run with the GPUs and batch the
// user asked for; a job moves from the first queue to the second once it has run 16 GPU-hours;
// at every interval the queues are served in order, each job starting if its GPUs are free
// (later small jobs may start past a big one that does not fit), packed onto the nodes with the
// most free GPUs. Running jobs keep their GPUs unless a job ahead of them claims them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "parasol/sched/policy.h"

namespace parasol::sched {

class TiresiasPolicy : public Policy {
 public:
  explicit TiresiasPolicy(double queue_threshold_gpu_s = 16 * 3600.0) : threshold_(queue_threshold_gpu_s) {}
  std::string name() const override { return "tiresias"; }
  Allocations Optimize(double now, const std::vector<const Job*>& active, const Allocations& previous,
                       const ClusterSpec& cluster) override;

 private:
  struct State {
    bool running = false;
    double last_check = 0;
    double executed_s = 0;  // wall time run since entering its queue
  };
  double threshold_;
  std::vector<std::string> queue0_, queue1_;
  std::map<std::string, State> state_;
};

}  // namespace parasol::sched
