// Broadcast and reduce schedules: a binomial tree for small messages (log2 p steps), a pipelined
// chain for large ones (the message streams through the ranks in segments, so time approaches
// S/B instead of log2(p) S/B).
#pragma once

#include <cstdint>

#include "parasol/collective/schedule.h"

namespace parasol::collective {

// Up to this many bytes, the binomial tree's fewer steps beat the chain's streaming.
inline constexpr uint64_t kTreeMaxBytes = 64 * 1024;

struct RootedParams {
  int nranks = 1;
  int rank = 0;
  int root = 0;
  uint64_t count = 0;
  size_t elem_size = 4;
  uint64_t segment_bytes = 0;  // 0: default
  bool from_input = false;     // out of place (see ProgramBuilder)
};

// Leaves the root's data[0, count) on every rank.
Program BuildBroadcast(const RootedParams& p);
// Leaves the reduction of every rank's data[0, count) on the root; other ranks' data is
// clobbered (the caller gives them a working copy).
Program BuildReduce(const RootedParams& p);

}  // namespace parasol::collective
