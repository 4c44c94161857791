#include "parasol/collective/torus2d.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "parasol/collective/ring.h"
#include "parasol/collective/topology.h"
#include "parasol/core/error.h"

namespace parasol::collective {

std::pair<int, int> TorusShape(const AllreduceParams& p) {
  int rows = p.torus_rows;
  if (rows == 0 && p.topology && p.topology->rows() > 0 &&
      p.topology->rows() * p.topology->cols() == p.nranks) {
    rows = p.topology->rows();
  }
  if (rows == 0) {
    rows = static_cast<int>(std::sqrt(static_cast<double>(p.nranks)));
    while (rows > 1 && p.nranks % rows != 0) --rows;
    rows = std::max(rows, 1);
  }
  if (rows < 1 || p.nranks % rows != 0) {
    throw InvalidArgumentError(fmt::format("torus2d: {} rows do not divide {} ranks", rows, p.nranks));
  }
  return {rows, p.nranks / rows};
}

Program BuildTorus2dAllreduce(const AllreduceParams& p) {
  auto [rows, cols] = TorusShape(p);
  ProgramBuilder b(p.rank, p.nranks, p.from_input, p.count);
  const int my_row = p.rank / cols, my_col = p.rank % cols;
  const bool two_d = rows > 1 && cols > 1;
  int parts = two_d ? 4 : 2;
  if (p.count < static_cast<uint64_t>(parts * p.nranks)) parts = 1;
  auto part_off = BalancedOffsets(p.count, parts);
  uint64_t seg = SegmentElems(p, kDefaultSegmentBytes);
  for (int k = 0; k < parts; ++k) {
    bool rows_first = !two_d || k < 2;
    bool reverse = k % 2 == 1;
    std::vector<int> row, col;
    for (int c = 0; c < cols; ++c) row.push_back(my_row * cols + c);
    for (int r = 0; r < rows; ++r) col.push_back(r * cols + my_col);
    if (reverse) {
      std::reverse(row.begin(), row.end());
      std::reverse(col.begin(), col.end());
    }
    const auto& first = rows_first ? row : col;
    const auto& second = rows_first ? col : row;
    // Phase 1 leaves chunk i of this part on the member at position i of `first`; every member of
    // its `second` group sits at the same position, so they hold the same chunk.
    auto outer = BalancedOffsets(part_off[static_cast<size_t>(k) + 1] - part_off[static_cast<size_t>(k)],
                                 static_cast<int>(first.size()));
    for (auto& o : outer) o += part_off[static_cast<size_t>(k)];
    size_t i = static_cast<size_t>(std::find(first.begin(), first.end(), p.rank) - first.begin());
    auto inner = BalancedOffsets(outer[i + 1] - outer[i], static_cast<int>(second.size()));
    for (auto& o : inner) o += outer[i];
    RingReduceScatter(b, first, outer, k, seg);
    RingReduceScatter(b, second, inner, k, seg);
    RingAllgather(b, second, inner, k, seg);
    RingAllgather(b, first, outer, k, seg);
  }
  return std::move(b).Finish();
}

}  // namespace parasol::collective
