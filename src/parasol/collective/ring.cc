#include "parasol/collective/ring.h"

#include <algorithm>

namespace parasol::collective {

namespace {

int PositionOf(const std::vector<int>& group, int rank) {
  auto it = std::find(group.begin(), group.end(), rank);
  return it == group.end() ? -1 : static_cast<int>(it - group.begin());
}

int Mod(int a, int n) { return ((a % n) + n) % n; }

// Interleaves the sends of one chunk with the receives of another, segment by segment, so both
// directions stream at once.
void Step(ProgramBuilder& b, int next, int prev, const std::vector<uint64_t>& chunks, int send_chunk,
          int recv_chunk, bool reduce, int channel, uint64_t seg_elems) {
  auto sends = Segments(chunks[static_cast<size_t>(send_chunk)], chunks[static_cast<size_t>(send_chunk) + 1], seg_elems);
  auto recvs = Segments(chunks[static_cast<size_t>(recv_chunk)], chunks[static_cast<size_t>(recv_chunk) + 1], seg_elems);
  for (size_t j = 0; j < std::max(sends.size(), recvs.size()); ++j) {
    if (j < sends.size()) b.Send(next, sends[j], channel);
    if (j < recvs.size()) {
      if (reduce) b.RecvReduce(prev, recvs[j], channel);
      else b.Recv(prev, recvs[j], channel);
    }
  }
}

}  // namespace

std::vector<Region> Segments(uint64_t begin, uint64_t end, uint64_t seg_elems) {
  std::vector<Region> out;
  if (end <= begin) return out;
  if (seg_elems == 0) seg_elems = end - begin;
  // Equal pieces rather than full pieces plus a stub: no tiny trailing message.
  uint64_t pieces = (end - begin + seg_elems - 1) / seg_elems;
  auto off = BalancedOffsets(end - begin, static_cast<int>(pieces));
  for (uint64_t i = 0; i < pieces; ++i) {
    out.push_back(Region{BufferId::kData, begin + off[i], off[i + 1] - off[i]});
  }
  return out;
}

void RingReduceScatter(ProgramBuilder& b, const std::vector<int>& group,
                       const std::vector<uint64_t>& chunks, int channel, uint64_t seg_elems) {
  int n = static_cast<int>(group.size());
  int i = PositionOf(group, b.rank());
  if (i < 0 || n < 2) return;
  int next = group[static_cast<size_t>(Mod(i + 1, n))];
  int prev = group[static_cast<size_t>(Mod(i - 1, n))];
  // Step s sends the chunk received (and reduced) in step s-1; the last step completes chunk i.
  for (int s = 0; s < n - 1; ++s) {
    Step(b, next, prev, chunks, Mod(i - s - 1, n), Mod(i - s - 2, n), /*reduce=*/true, channel, seg_elems);
  }
}

void RingAllgather(ProgramBuilder& b, const std::vector<int>& group,
                   const std::vector<uint64_t>& chunks, int channel, uint64_t seg_elems) {
  int n = static_cast<int>(group.size());
  int i = PositionOf(group, b.rank());
  if (i < 0 || n < 2) return;
  int next = group[static_cast<size_t>(Mod(i + 1, n))];
  int prev = group[static_cast<size_t>(Mod(i - 1, n))];
  for (int s = 0; s < n - 1; ++s) {
    Step(b, next, prev, chunks, Mod(i - s, n), Mod(i - s - 1, n), /*reduce=*/false, channel, seg_elems);
  }
}

Program BuildRingAllreduce(const AllreduceParams& p) {
  ProgramBuilder b(p.rank, p.nranks, p.from_input, p.count);
  std::vector<int> group(static_cast<size_t>(p.nranks));
  for (int r = 0; r < p.nranks; ++r) group[static_cast<size_t>(r)] = r;
  auto chunks = BalancedOffsets(p.count, p.nranks);
  uint64_t seg = SegmentElems(p, kDefaultSegmentBytes);
  RingReduceScatter(b, group, chunks, 0, seg);
  RingAllgather(b, group, chunks, 0, seg);
  return std::move(b).Finish();
}

}  // namespace parasol::collective
