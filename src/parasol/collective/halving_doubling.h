// Recursive halving-doubling allreduce (Rabenseifner): reduce-scatter by recursive halving, then
// allgather by recursive doubling, log2(p) steps each. Small messages use recursive doubling
// (whole vector, log2(p) steps). A non-power-of-two p folds its first 2r ranks in pairs first
// and sends them the result at the end (r = p - largest power of two).
#pragma once

#include <vector>

#include "parasol/collective/algorithm.h"
#include "parasol/collective/schedule.h"

namespace parasol::collective {

// Up to this many bytes, recursive doubling (fewer steps) beats halving (fewer bytes).
inline constexpr uint64_t kDoublingMaxBytes = 4096;

// Allreduce of data[begin, end) over `group`.
void HalvingDoubling(ProgramBuilder& b, const std::vector<int>& group, uint64_t begin, uint64_t end,
                     int channel, uint64_t seg_elems, bool doubling_only);

Program BuildHalvingDoublingAllreduce(const AllreduceParams& p);

}  // namespace parasol::collective
