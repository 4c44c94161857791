#include "parasol/collective/exchange.h"

#include "parasol/collective/ring.h"

namespace parasol::collective {

namespace {

std::vector<int> AllRanks(int n) {
  std::vector<int> g(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) g[static_cast<size_t>(r)] = r;
  return g;
}

uint64_t SegElems(size_t elem_size, uint64_t segment_bytes) {
  return std::max<uint64_t>(1, (segment_bytes ? segment_bytes : 1024 * 1024) / elem_size);
}

}  // namespace

Program BuildReduceScatter(int nranks, int rank, const std::vector<uint64_t>& blocks, size_t elem_size,
                           uint64_t segment_bytes, bool from_input) {
  ProgramBuilder b(rank, nranks, from_input, blocks.back());
  RingReduceScatter(b, AllRanks(nranks), blocks, 0, SegElems(elem_size, segment_bytes));
  return std::move(b).Finish();
}

Program BuildAllgather(int nranks, int rank, const std::vector<uint64_t>& blocks, size_t elem_size,
                       uint64_t segment_bytes) {
  ProgramBuilder b(rank, nranks);
  RingAllgather(b, AllRanks(nranks), blocks, 0, SegElems(elem_size, segment_bytes));
  return std::move(b).Finish();
}

Program BuildAlltoall(int nranks, int rank, uint64_t count) {
  ProgramBuilder b(rank, nranks);
  auto block = [&](BufferId buf, int r) { return Region{buf, static_cast<uint64_t>(r) * count, count}; };
  // Pairwise exchange: in step s, send to rank+s and receive from rank-s; every step is
  // independent, so all of them are in flight at once.
  for (int s = 1; s < nranks; ++s) {
    int to = (rank + s) % nranks;
    int from = (rank - s + nranks) % nranks;
    b.Send(to, block(BufferId::kInput, to));
    b.Recv(from, block(BufferId::kData, from));
  }
  b.Copy(block(BufferId::kData, rank), block(BufferId::kInput, rank));
  return std::move(b).Finish();
}

Program BuildAlltoallv(int nranks, int rank, const std::vector<uint64_t>& send_offsets,
                       const std::vector<uint64_t>& recv_offsets) {
  ProgramBuilder b(rank, nranks);
  auto block = [](BufferId buf, const std::vector<uint64_t>& offsets, int r) {
    const auto i = static_cast<size_t>(r);
    return Region{buf, offsets[i], offsets[i + 1] - offsets[i]};
  };
  for (int s = 1; s < nranks; ++s) {  // the same pairwise order as BuildAlltoall
    const int to = (rank + s) % nranks;
    const int from = (rank - s + nranks) % nranks;
    b.Send(to, block(BufferId::kInput, send_offsets, to));
    b.Recv(from, block(BufferId::kData, recv_offsets, from));
  }
  b.Copy(block(BufferId::kData, recv_offsets, rank), block(BufferId::kInput, send_offsets, rank));
  return std::move(b).Finish();
}

}  // namespace parasol::collective
