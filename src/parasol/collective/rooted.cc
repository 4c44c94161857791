#include "parasol/collective/rooted.h"

#include "parasol/collective/ring.h"

namespace parasol::collective {

namespace {

int RealRank(int vr, const RootedParams& p) { return (vr + p.root) % p.nranks; }

uint64_t Seg(const RootedParams& p) {
  uint64_t bytes = p.segment_bytes ? p.segment_bytes : 1024 * 1024;
  return std::max<uint64_t>(1, bytes / p.elem_size);
}

bool UseTree(const RootedParams& p) { return p.count * p.elem_size <= kTreeMaxBytes || p.nranks <= 2; }

}  // namespace

Program BuildBroadcast(const RootedParams& p) {
  ProgramBuilder b(p.rank, p.nranks);
  const int n = p.nranks;
  const int vr = (p.rank - p.root + n) % n;
  if (UseTree(p)) {
    Region all{BufferId::kData, 0, p.count};
    int mask = 1;
    while (mask < n) {  // receive from the parent: clear the lowest set bit
      if (vr & mask) {
        b.Recv(RealRank(vr - mask, p), all);
        break;
      }
      mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
      if (vr + mask < n) b.Send(RealRank(vr + mask, p), all);
    }
  } else {
    for (const Region& seg : Segments(0, p.count, Seg(p))) {
      if (vr > 0) b.Recv(RealRank(vr - 1, p), seg);
      if (vr < n - 1) b.Send(RealRank(vr + 1, p), seg);
    }
  }
  return std::move(b).Finish();
}

Program BuildReduce(const RootedParams& p) {
  ProgramBuilder b(p.rank, p.nranks, p.from_input, p.count);
  const int n = p.nranks;
  const int vr = (p.rank - p.root + n) % n;
  if (UseTree(p)) {
    Region all{BufferId::kData, 0, p.count};
    for (int mask = 1; mask < n; mask <<= 1) {
      if (vr & mask) {
        b.Send(RealRank(vr - mask, p), all);
        break;
      }
      if (vr + mask < n) b.RecvReduce(RealRank(vr + mask, p), all);
    }
  } else {
    for (const Region& seg : Segments(0, p.count, Seg(p))) {
      if (vr < n - 1) b.RecvReduce(RealRank(vr + 1, p), seg);
      if (vr > 0) b.Send(RealRank(vr - 1, p), seg);
    }
  }
  return std::move(b).Finish();
}

}  // namespace parasol::collective
