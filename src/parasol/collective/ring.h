// Ring allreduce (reduce-scatter then allgather), and the ring phases as building blocks over any
// group of ranks, which torus2d and multiring reuse.
#pragma once

#include <vector>

#include "parasol/collective/algorithm.h"
#include "parasol/collective/schedule.h"

namespace parasol::collective {

// `group` lists ranks in ring order; `chunks` holds |group|+1 absolute element offsets in the
// data buffer. After the reduce-scatter, the member at position i holds chunk i reduced over the
// group; the allgather starts from that state and leaves every chunk everywhere. Each chunk moves
// in segments of `seg_elems` elements, so large messages stream through the ring. Ranks outside
// the group add nothing.
void RingReduceScatter(ProgramBuilder& b, const std::vector<int>& group, const std::vector<uint64_t>& chunks,
                       int channel, uint64_t seg_elems);
void RingAllgather(ProgramBuilder& b, const std::vector<int>& group, const std::vector<uint64_t>& chunks,
                   int channel, uint64_t seg_elems);

// Sends `send` to `send_peer` and receives `recv` from `recv_peer` (reducing into it or
// overwriting it), segment by segment and interleaved, so both directions stream at once. An
// empty region sends or receives nothing.
void SendRecv(ProgramBuilder& b, int send_peer, Region send, int recv_peer, Region recv, bool reduce,
              int channel, uint64_t seg_elems);

// This rank's position in `group` and its neighbours there (a ring: the ends wrap), or false if
// it is not a member.
struct RingPosition {
  int index = -1;
  int next = -1;
  int prev = -1;
};
bool FindInRing(const std::vector<int>& group, int rank, RingPosition* pos);

// Splits [begin, end) into pieces of at most seg_elems (one piece if seg_elems is 0).
std::vector<Region> Segments(uint64_t begin, uint64_t end, uint64_t seg_elems);
inline std::vector<Region> Segments(const Region& r, uint64_t seg_elems) {
  return Segments(r.offset, r.offset + r.count, seg_elems);
}

Program BuildRingAllreduce(const AllreduceParams& p);

}  // namespace parasol::collective
