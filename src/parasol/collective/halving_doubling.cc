#include "parasol/collective/halving_doubling.h"

#include <algorithm>

#include "parasol/collective/ring.h"

namespace parasol::collective {

namespace {

Region Range(uint64_t lo, uint64_t hi) { return Region{BufferId::kData, lo, hi - lo}; }
constexpr Region kNothing{};

}  // namespace

void HalvingDoubling(ProgramBuilder& b, const std::vector<int>& group, uint64_t begin, uint64_t end,
                     int channel, uint64_t seg, bool doubling_only) {
  const int p = static_cast<int>(group.size());
  auto pos = std::find(group.begin(), group.end(), b.rank());
  if (pos == group.end() || p < 2) return;
  const int i = static_cast<int>(pos - group.begin());
  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;
  const int r = p - p2;
  auto rank_of = [&](int v) { return group[static_cast<size_t>(v < r ? 2 * v + 1 : v + r)]; };

  // Fold: among the first 2r, even positions hand their vector to the odd one after them.
  if (i < 2 * r && i % 2 == 0) {
    int partner = group[static_cast<size_t>(i + 1)];
    SendRecv(b, partner, Range(begin, end), partner, kNothing, false, channel, seg);
    SendRecv(b, partner, kNothing, partner, Range(begin, end), false, channel, seg);
    return;
  }
  if (i < 2 * r) {
    int partner = group[static_cast<size_t>(i - 1)];
    SendRecv(b, partner, kNothing, partner, Range(begin, end), true, channel, seg);
  }
  const int v = i < 2 * r ? i / 2 : i - r;

  if (doubling_only || end - begin < static_cast<uint64_t>(p2)) {
    for (int mask = 1; mask < p2; mask <<= 1) {
      SendRecv(b, rank_of(v ^ mask), Range(begin, end), rank_of(v ^ mask), Range(begin, end), true, channel,
               seg);
    }
  } else {
    auto blocks = BalancedOffsets(end - begin, p2);
    auto at = [&](int blk) { return begin + blocks[static_cast<size_t>(blk)]; };
    int lo = 0, hi = p2;
    for (int mask = p2 / 2; mask >= 1; mask /= 2) {  // halving: keep the half holding block v
      int mid = (lo + hi) / 2;
      bool lower = (v & mask) == 0;
      int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
      int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
      int partner = rank_of(v ^ mask);
      SendRecv(b, partner, Range(at(give_lo), at(give_hi)), partner, Range(at(keep_lo), at(keep_hi)), true,
               channel, seg);
      lo = keep_lo;
      hi = keep_hi;
    }
    for (int mask = 1; mask < p2; mask <<= 1) {  // doubling: swap halves back
      int width = hi - lo;
      bool lower = (v & mask) == 0;
      int other_lo = lower ? hi : lo - width, other_hi = lower ? hi + width : lo;
      int partner = rank_of(v ^ mask);
      SendRecv(b, partner, Range(at(lo), at(hi)), partner, Range(at(other_lo), at(other_hi)), false, channel,
               seg);
      lo = std::min(lo, other_lo);
      hi = std::max(hi, other_hi);
    }
  }
  if (i < 2 * r) {
    int partner = group[static_cast<size_t>(i - 1)];
    SendRecv(b, partner, Range(begin, end), partner, kNothing, false, channel, seg);
  }
}

Program BuildHalvingDoublingAllreduce(const AllreduceParams& p) {
  ProgramBuilder b(p.rank, p.nranks, p.from_input, p.count);
  std::vector<int> group(static_cast<size_t>(p.nranks));
  for (int r = 0; r < p.nranks; ++r) group[static_cast<size_t>(r)] = r;
  bool small = p.count * p.elem_size <= kDoublingMaxBytes;
  HalvingDoubling(b, group, 0, p.count, 0, SegmentElems(p, kDefaultSegmentBytes), small);
  return std::move(b).Finish();
}

}  // namespace parasol::collective
