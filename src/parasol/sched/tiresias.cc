#include "parasol/sched/tiresias.h"

#include <algorithm>
#include <set>

namespace parasol::sched {

std::vector<int> PlacementOf(const Allocation& allocation) {
  std::vector<int> placement;
  for (size_t i = 0; i < allocation.size(); ++i) {
    if (i == 0 || allocation[i] != allocation[i - 1]) placement.push_back(0);
    ++placement.back();
  }
  return placement;
}

Allocations TiresiasPolicy::Optimize(double now, const std::vector<SimJob*>& active, const Allocations& previous,
                                     const ClusterSpec& cluster) {
  std::map<std::string, const SimJob*> jobs;
  for (const SimJob* j : active) jobs[j->name()] = j;
  auto gone = [&](const std::string& n) { return !jobs.contains(n); };
  std::erase_if(queue0_, gone);
  std::erase_if(queue1_, gone);
  std::erase_if(state_, [&](const auto& kv) { return gone(kv.first); });
  Allocations alloc;
  for (const auto& [n, a] : previous) {
    if (!gone(n)) alloc[n] = a;
  }
  for (const SimJob* j : active) {
    if (!state_.contains(j->name())) state_[j->name()], queue0_.push_back(j->name());
  }
  // Attained service; demotion to the second queue.
  for (const SimJob* j : active) {
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
  std::vector<int> free(static_cast<size_t>(cluster.nodes), cluster.gpus_per_node);
  for (const auto& [n, a] : alloc) {
    for (int node : a) --free[static_cast<size_t>(node)];
  }
  for (const auto* queue : {&queue0_, &queue1_}) {
    for (const std::string& n : *queue) {
      if (!state_[n].running || !alloc[n].empty()) continue;
      Allocation& a = alloc[n];
      const int want = jobs[n]->requested_replicas();
      while (static_cast<int>(a.size()) < want) {
        auto best = std::max_element(free.begin(), free.end());
        if (*best == 0) break;  // cannot happen: the job was admitted because its GPUs are free
        const int node = static_cast<int>(best - free.begin());
        const int take = std::min(*best, want - static_cast<int>(a.size()));
        a.insert(a.end(), static_cast<size_t>(take), node);
        *best -= take;
      }
    }
  }
  std::erase_if(alloc, [](const auto& kv) { return kv.second.empty(); });
  return alloc;
}

}  // namespace parasol::sched
