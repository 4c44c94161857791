#include "parasol/core/balance.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

namespace parasol {

std::vector<uint32_t> AssignToParts(std::span<const uint64_t> weights, uint32_t parts) {
  assert(parts >= 1);
  std::vector<uint32_t> order(weights.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return weights[a] > weights[b]; });
  using Load = std::pair<uint64_t, uint32_t>;  // (load, part): the least load first, then the lower part
  std::priority_queue<Load, std::vector<Load>, std::greater<>> load;
  for (uint32_t p = 0; p < parts; ++p) load.emplace(0, p);
  std::vector<uint32_t> part(weights.size());
  for (uint32_t i : order) {
    auto [l, p] = load.top();
    load.pop();
    part[i] = p;
    load.emplace(l + weights[i], p);
  }
  return part;
}

std::vector<size_t> CutEvenly(std::span<const uint64_t> offsets, size_t begin, size_t end, uint32_t parts) {
  std::vector<size_t> cut{begin};
  const uint64_t base = offsets[begin], total = offsets[end] - base;
  size_t i = begin;
  for (uint32_t p = 1; p < parts; ++p) {
    const uint64_t goal = base + total * p / parts;
    while (i < end && offsets[i + 1] <= goal) ++i;
    cut.push_back(std::max(i, cut.back()));
  }
  cut.push_back(end);
  return cut;
}

}  // namespace parasol
