#include "parasol/sched/optimus.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::sched {

int OptimusPolicy::MaxReplicas(const SimJob& job) {
  if (job.app().name() == "ncf") return 1;
  return std::max(1, job.requested_batch() / job.app().min_local_bsz());
}

double OptimusPolicy::PredictStepTime(const SimJob& job, int replicas, int gpus_per_node) {
  const Application& app = job.app();
  std::vector<int> placement;
  for (int left = replicas; left > 0; left -= gpus_per_node)
    placement.push_back(std::min(left, gpus_per_node));
  const int local = static_cast<int>(std::ceil(static_cast<double>(job.requested_batch()) / replicas - 1e-8));
  const auto [split_atomic, accum] = SplitLocalBatch(local, app.max_local_bsz(), replicas == 1);
  const int atomic = std::min(split_atomic, app.max_batch_size() / (replicas * (accum + 1)));
  const StepTime t = app.Throughput(placement, atomic);
  return t.step + (t.step - t.sync) * accum;
}

Allocations OptimusPolicy::Optimize(double, const std::vector<const Job*>& active,
                                    const Allocations& previous, const ClusterSpec& cluster) {
  // Oracle: iterations left to the last epoch at the job's batch, from the simulator's profiles.
  std::vector<const SimJob*> jobs;
  for (const Job* j : active) {
    const auto* s = dynamic_cast<const SimJob*>(j);
    if (!s)
      throw InvalidArgumentError(
          fmt::format("optimus: job {} has no profile (its oracle needs one)", j->name()));
    jobs.push_back(s);
  }
  std::map<std::string, double> remaining;
  for (const SimJob* j : jobs) {
    const int last = j->app().max_epochs() - 1;
    remaining[j->name()] = last <= j->epoch() ? 1.0
                                              : j->app().Iterations(j->requested_batch(), last) -
                                                    j->app().Iterations(j->requested_batch(), j->epoch());
  }
  int gpus = cluster.nodes * cluster.gpus_per_node;
  std::map<std::string, int> replicas;
  std::vector<double> gain(active.size(), 0.0);
  auto marginal = [&](size_t i) {
    const SimJob& j = *jobs[i];
    const int r = replicas[j.name()];
    if (r + 1 > MaxReplicas(j) || gpus < 1) return 0.0;
    return (PredictStepTime(j, r, cluster.gpus_per_node) - PredictStepTime(j, r + 1, cluster.gpus_per_node)) *
           remaining[j.name()];
  };
  for (size_t i = 0; i < active.size(); ++i) {
    if (gpus < 1) {
      replicas[active[i]->name()] = 0;
      continue;
    }
    replicas[active[i]->name()] = 1;
    --gpus;
    gain[i] = marginal(i);
  }
  while (gpus > 0) {
    auto best = std::max_element(gain.begin(), gain.end());  // first on ties: submission order
    if (best == gain.end() || *best <= 0) break;
    const size_t i = static_cast<size_t>(best - gain.begin());
    ++replicas[active[i]->name()];
    --gpus;
    gain[i] = marginal(i);
  }
  Allocations alloc;
  for (const auto& [n, a] : previous) {
    auto it = replicas.find(n);
    if (it != replicas.end() && static_cast<int>(a.size()) == it->second) alloc[n] = a;
  }
  std::vector<std::pair<std::string, int>> order;
  for (const SimJob* j : jobs) order.emplace_back(j->name(), replicas[j->name()]);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  PackMostFree(order, alloc, cluster);
  std::erase_if(alloc, [](const auto& kv) { return kv.second.empty(); });
  return alloc;
}

}  // namespace parasol::sched
