#include "parasol/collective/multiring.h"

#include <algorithm>
#include <numeric>

#include "parasol/collective/ring.h"

namespace parasol::collective {

std::vector<std::vector<int>> MultiringOrders(int n, int rings) {
  std::vector<int> strides;
  for (int s = 1; s < n && static_cast<int>(strides.size()) < rings; ++s) {
    for (int cand : {s, n - s}) {
      if (static_cast<int>(strides.size()) < rings && std::gcd(cand, n) == 1 &&
          std::find(strides.begin(), strides.end(), cand) == strides.end()) {
        strides.push_back(cand);
      }
    }
  }
  if (strides.empty()) strides.push_back(1);
  std::vector<std::vector<int>> orders;
  for (int s : strides) {
    std::vector<int> order(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      order[static_cast<size_t>(i)] = static_cast<int>((static_cast<int64_t>(i) * s) % n);
    orders.push_back(std::move(order));
  }
  return orders;
}

Program BuildMultiringAllreduce(const AllreduceParams& p) {
  return BuildRingsAllreduce(p,
                             MultiringOrders(p.nranks, std::clamp(p.rings, 1, ProgramBuilder::kMaxChannels)));
}

Program BuildRingsAllreduce(const AllreduceParams& p, std::vector<std::vector<int>> orders) {
  ProgramBuilder b(p.rank, p.nranks, p.from_input, p.count);
  if (p.count < static_cast<uint64_t>(orders.size()) * static_cast<uint64_t>(p.nranks)) orders.resize(1);
  const int k = static_cast<int>(orders.size());
  auto part = BalancedOffsets(p.count, k);
  uint64_t seg = SegmentElems(p, kDefaultSegmentBytes);
  for (int j = 0; j < k; ++j) {
    auto chunks = BalancedOffsets(part[static_cast<size_t>(j) + 1] - part[static_cast<size_t>(j)], p.nranks);
    for (auto& c : chunks) c += part[static_cast<size_t>(j)];
    RingReduceScatter(b, orders[static_cast<size_t>(j)], chunks, j, seg);
    RingAllgather(b, orders[static_cast<size_t>(j)], chunks, j, seg);
  }
  return std::move(b).Finish();
}

}  // namespace parasol::collective
