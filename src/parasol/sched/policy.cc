#include "parasol/sched/policy.h"

#include <algorithm>

namespace parasol::sched {

std::vector<int> PlacementOf(const Allocation& allocation) {
  std::vector<int> placement;
  for (size_t i = 0; i < allocation.size(); ++i) {
    if (i == 0 || allocation[i] != allocation[i - 1]) placement.push_back(0);
    ++placement.back();
  }
  return placement;
}

void PackMostFree(const std::vector<std::pair<std::string, int>>& order, Allocations& alloc,
                  const ClusterSpec& cluster) {
  std::vector<int> free(static_cast<size_t>(cluster.nodes), cluster.gpus_per_node);
  for (const auto& [n, a] : alloc) {
    for (int node : a) --free[static_cast<size_t>(node)];
  }
  for (const auto& [name, want] : order) {
    if (want <= 0 || (alloc.contains(name) && !alloc[name].empty())) continue;
    Allocation& a = alloc[name];
    while (static_cast<int>(a.size()) < want) {
      auto best = std::max_element(free.begin(), free.end());
      if (*best <= 0) break;  // callers never ask for more than is free
      const int take = std::min(*best, want - static_cast<int>(a.size()));
      a.insert(a.end(), static_cast<size_t>(take), static_cast<int>(best - free.begin()));
      *best -= take;
    }
  }
}

}  // namespace parasol::sched
