#include "parasol/collective/ring.h"

#include <algorithm>

namespace parasol::collective {

namespace {

int Mod(int a, int n) { return ((a % n) + n) % n; }

Region Chunk(const std::vector<uint64_t>& chunks, int c) {
  return Region{BufferId::kData, chunks[static_cast<size_t>(c)],
                chunks[static_cast<size_t>(c) + 1] - chunks[static_cast<size_t>(c)]};
}

}  // namespace

void SendRecv(ProgramBuilder& b, int send_peer, Region send, int recv_peer, Region recv, bool reduce,
              int channel, uint64_t seg_elems) {
  auto sends = Segments(send, seg_elems);
  auto recvs = Segments(recv, seg_elems);
  for (size_t j = 0; j < std::max(sends.size(), recvs.size()); ++j) {
    if (j < sends.size()) b.Send(send_peer, sends[j], channel);
    if (j < recvs.size()) {
      if (reduce)
        b.RecvReduce(recv_peer, recvs[j], channel);
      else
        b.Recv(recv_peer, recvs[j], channel);
    }
  }
}

bool FindInRing(const std::vector<int>& group, int rank, RingPosition* pos) {
  auto it = std::find(group.begin(), group.end(), rank);
  if (it == group.end()) return false;
  int n = static_cast<int>(group.size());
  pos->index = static_cast<int>(it - group.begin());
  pos->next = group[static_cast<size_t>(Mod(pos->index + 1, n))];
  pos->prev = group[static_cast<size_t>(Mod(pos->index - 1, n))];
  return true;
}

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

void RingReduceScatter(ProgramBuilder& b, const std::vector<int>& group, const std::vector<uint64_t>& chunks,
                       int channel, uint64_t seg_elems) {
  int n = static_cast<int>(group.size());
  RingPosition at;
  if (n < 2 || !FindInRing(group, b.rank(), &at)) return;
  // Step s sends the chunk received (and reduced) in step s-1; the last step completes chunk i.
  for (int s = 0; s < n - 1; ++s) {
    SendRecv(b, at.next, Chunk(chunks, Mod(at.index - s - 1, n)), at.prev,
             Chunk(chunks, Mod(at.index - s - 2, n)),
             /*reduce=*/true, channel, seg_elems);
  }
}

void RingAllgather(ProgramBuilder& b, const std::vector<int>& group, const std::vector<uint64_t>& chunks,
                   int channel, uint64_t seg_elems) {
  int n = static_cast<int>(group.size());
  RingPosition at;
  if (n < 2 || !FindInRing(group, b.rank(), &at)) return;
  for (int s = 0; s < n - 1; ++s) {
    SendRecv(b, at.next, Chunk(chunks, Mod(at.index - s, n)), at.prev,
             Chunk(chunks, Mod(at.index - s - 1, n)),
             /*reduce=*/false, channel, seg_elems);
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
