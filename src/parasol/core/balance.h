// Items of given weights split into parts of even loads, in any order (AssignToParts) or in
// contiguous ranges (CutEvenly).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace parasol {

// The part, in [0, parts), of each item: the heaviest item first, each to the part with the least
// load so far (longest processing time first), so every part's load ends within the heaviest item
// of every other's. Ties go to the lower part: the same weights give the same assignment in every
// process. REQUIRES: parts >= 1.
std::vector<uint32_t> AssignToParts(std::span<const uint64_t> weights, uint32_t parts);

// The parts + 1 boundaries cutting items [begin, end) into `parts` contiguous ranges of about equal
// weight, item i's weight being offsets[i + 1] - offsets[i]: boundary p is the first item whose end
// passes p / parts of the total (rounded down), so ranges may be empty. REQUIRES: begin <= end <
// offsets.size(), offsets not decreasing, parts >= 1.
std::vector<size_t> CutEvenly(std::span<const uint64_t> offsets, size_t begin, size_t end, uint32_t parts);

}  // namespace parasol
