#include "parasol/sched/tiresias.h"

#include <algorithm>

namespace parasol::sched {

Allocations TiresiasPolicy::Optimize(double now, const std::vector<const Job*>& active,
                                     const Allocations& previous, const ClusterSpec& cluster) {
  std::map<std::string, const Job*> jobs;
  for (const Job* j : active) jobs[j->name()] = j;
  auto gone = [&](const std::string& n) { return !jobs.contains(n); };
  std::erase_if(queue0_, gone);
  std::erase_if(queue1_, gone);
  std::erase_if(state_, [&](const auto& kv) { return gone(kv.first); });
  Allocations alloc;
  for (const auto& [n, a] : previous) {
    if (!gone(n)) alloc[n] = a;
  }
  for (const Job* j : active) {
    if (!state_.contains(j->name())) state_[j->name()], queue0_.push_back(j->name());
  }
  // Attained service; demotion to the second queue.
  for (const Job* j : active) {
    State& s = state_[j->name()];
    const double elapsed = static_cast<double>(static_cast<long>(now) - static_cast<long>(s.last_check));
    s.last_check = now;
    if (!s.running) continue;
    s.executed_s += elapsed;
    auto it = std::find(queue0_.begin(), queue0_.end(), j->name());
    if (it != queue0_.end() && s.executed_s * j->requested_replicas() >= threshold_) {
      queue0_.erase(it);
      queue1_.push_back(j->name());
    }
  }
  // Who runs: in queue order, whoever fits in what is left.
  int left = cluster.nodes * cluster.gpus_per_node;
  for (const auto* queue : {&queue0_, &queue1_}) {
    for (const std::string& n : *queue) {
      State& s = state_[n];
      const int want = jobs[n]->requested_replicas();
      s.running = want <= left;
      if (s.running) {
        left -= want;
      } else {
        alloc.erase(n);
      }
    }
  }
  // Place new runners on the nodes with the most free GPUs (lowest index on ties).
  std::vector<std::pair<std::string, int>> order;
  for (const auto* queue : {&queue0_, &queue1_}) {
    for (const std::string& n : *queue)
      order.emplace_back(n, state_[n].running ? jobs[n]->requested_replicas() : 0);
  }
  PackMostFree(order, alloc, cluster);
  std::erase_if(alloc, [](const auto& kv) { return kv.second.empty(); });
  return alloc;
}

}  // namespace parasol::sched
