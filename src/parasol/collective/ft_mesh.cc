#include "parasol/collective/ft_mesh.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "parasol/collective/ring.h"
#include "parasol/collective/topology.h"
#include "parasol/core/error.h"

namespace parasol::collective {

namespace {

// Chunk ids ordered by (owner, id).
std::vector<int> ByOwner(const std::vector<int>& owner, bool descending) {
  std::vector<int> ids(owner.size());
  for (size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int>(k);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
    int oa = owner[static_cast<size_t>(a)], ob = owner[static_cast<size_t>(b)];
    return descending ? oa > ob : oa < ob;
  });
  return ids;
}

// Emits ops for the chunks in `ids`, alternating between two lists so both directions of the
// line progress together.
template <typename EmitFn>
void Alternate(const std::vector<int>& a, const std::vector<int>& b, EmitFn emit) {
  for (size_t j = 0; j < std::max(a.size(), b.size()); ++j) {
    if (j < a.size()) emit(a[j]);
    if (j < b.size()) emit(b[j]);
  }
}

}  // namespace

void LineReduceScatter(ProgramBuilder& b, const std::vector<int>& line, const std::vector<Region>& chunks,
                       const std::vector<int>& owner, int channel, uint64_t seg) {
  const int len = static_cast<int>(line.size());
  auto it = std::find(line.begin(), line.end(), b.rank());
  if (it == line.end() || len < 2) return;
  const int i = static_cast<int>(it - line.begin());
  const int left = i > 0 ? line[static_cast<size_t>(i - 1)] : -1;
  const int right = i + 1 < len ? line[static_cast<size_t>(i + 1)] : -1;
  // Every node sends rightwards the chunks owned further right, farthest first, and leftwards
  // those owned further left, farthest first; its neighbours receive them in that same order.
  std::vector<int> rightward, leftward, mine;
  for (int k : ByOwner(owner, /*descending=*/true)) {
    if (owner[static_cast<size_t>(k)] > i) rightward.push_back(k);
  }
  for (int k : ByOwner(owner, /*descending=*/false)) {
    if (owner[static_cast<size_t>(k)] < i) leftward.push_back(k);
    if (owner[static_cast<size_t>(k)] == i) mine.push_back(k);
  }
  auto forward = [&](int k, int from, int to) {
    for (const Region& s : Segments(chunks[static_cast<size_t>(k)].offset,
                                    chunks[static_cast<size_t>(k)].offset + chunks[static_cast<size_t>(k)].count, seg)) {
      if (from >= 0) b.RecvReduce(from, s, channel);
      b.Send(to, s, channel);
    }
  };
  Alternate(rightward, leftward, [&](int k) {
    if (owner[static_cast<size_t>(k)] > i) forward(k, left, right);
    else forward(k, right, left);
  });
  for (int k : mine) {
    for (const Region& s : Segments(chunks[static_cast<size_t>(k)].offset,
                                    chunks[static_cast<size_t>(k)].offset + chunks[static_cast<size_t>(k)].count, seg)) {
      if (left >= 0) b.RecvReduce(left, s, channel);
      if (right >= 0) b.RecvReduce(right, s, channel);
    }
  }
}

void LineAllgather(ProgramBuilder& b, const std::vector<int>& line, const std::vector<Region>& chunks,
                   const std::vector<int>& owner, int channel, uint64_t seg) {
  const int len = static_cast<int>(line.size());
  auto it = std::find(line.begin(), line.end(), b.rank());
  if (it == line.end() || len < 2) return;
  const int i = static_cast<int>(it - line.begin());
  const int left = i > 0 ? line[static_cast<size_t>(i - 1)] : -1;
  const int right = i + 1 < len ? line[static_cast<size_t>(i + 1)] : -1;
  // Chunks travel away from their owners, nearest owner first: rightwards in descending owner
  // order (owners at or left of i), leftwards in ascending order (owners at or right of i).
  std::vector<int> rightward, leftward;
  for (int k : ByOwner(owner, /*descending=*/true)) {
    if (owner[static_cast<size_t>(k)] <= i) rightward.push_back(k);
  }
  for (int k : ByOwner(owner, /*descending=*/false)) {
    if (owner[static_cast<size_t>(k)] >= i) leftward.push_back(k);
  }
  auto pass = [&](int k, int from, int to) {
    for (const Region& s : Segments(chunks[static_cast<size_t>(k)].offset,
                                    chunks[static_cast<size_t>(k)].offset + chunks[static_cast<size_t>(k)].count, seg)) {
      if (from >= 0) b.Recv(from, s, channel);
      if (to >= 0) b.Send(to, s, channel);
    }
  };
  // An owned chunk is in both lists: it goes out both ways without being received.
  Alternate(rightward, leftward, [&, done = std::vector<bool>(owner.size(), false)](int k) mutable {
    if (owner[static_cast<size_t>(k)] == i) {
      if (done[static_cast<size_t>(k)]) return;
      done[static_cast<size_t>(k)] = true;
      pass(k, -1, right);
      pass(k, -1, left);
    } else if (owner[static_cast<size_t>(k)] < i) {
      pass(k, left, right);
    } else {
      pass(k, right, left);
    }
  });
}

namespace {

struct Mesh {
  int rows, cols;
  const Topology* t;
  int rank(int r, int c) const { return t->rank_of_node(r * cols + c); }  // -1 if failed
};

// One orientation: lines are rows (transpose=false) or columns (transpose=true).
void MeshPart(ProgramBuilder& b, const Mesh& m, bool transpose, uint64_t begin, uint64_t end,
              int channel, uint64_t seg) {
  const int lines = transpose ? m.cols : m.rows;
  const int width = transpose ? m.rows : m.cols;
  auto at = [&](int line, int pos) { return transpose ? m.rank(pos, line) : m.rank(line, pos); };
  auto chunk_off = BalancedOffsets(end - begin, width);
  std::vector<Region> chunks(static_cast<size_t>(width));
  for (int k = 0; k < width; ++k) {
    chunks[static_cast<size_t>(k)] = Region{BufferId::kData, begin + chunk_off[static_cast<size_t>(k)],
                                            chunk_off[static_cast<size_t>(k) + 1] - chunk_off[static_cast<size_t>(k)]};
  }
  // Per line: its live members, and for each chunk the member that owns it (nearest live node to
  // the chunk's home position; the left one on ties).
  std::vector<std::vector<int>> members(static_cast<size_t>(lines));
  std::vector<std::vector<int>> owner_rank(static_cast<size_t>(lines), std::vector<int>(static_cast<size_t>(width), -1));
  std::vector<std::vector<int>> owner_pos(static_cast<size_t>(lines), std::vector<int>(static_cast<size_t>(width), -1));
  for (int l = 0; l < lines; ++l) {
    std::vector<int> cols_alive;
    for (int q = 0; q < width; ++q) {
      if (at(l, q) >= 0) {
        members[static_cast<size_t>(l)].push_back(at(l, q));
        cols_alive.push_back(q);
      }
    }
    if (cols_alive.empty()) continue;
    for (int k = 0; k < width; ++k) {
      size_t best = 0;
      for (size_t j = 1; j < cols_alive.size(); ++j) {
        if (std::abs(cols_alive[j] - k) < std::abs(cols_alive[best] - k)) best = j;
      }
      owner_pos[static_cast<size_t>(l)][static_cast<size_t>(k)] = static_cast<int>(best);
      owner_rank[static_cast<size_t>(l)][static_cast<size_t>(k)] = members[static_cast<size_t>(l)][best];
    }
  }
  int my_line = -1;
  for (int l = 0; l < lines && my_line < 0; ++l) {
    const auto& mem = members[static_cast<size_t>(l)];
    if (std::find(mem.begin(), mem.end(), b.rank()) != mem.end()) my_line = l;
  }
  if (my_line < 0) return;
  LineReduceScatter(b, members[static_cast<size_t>(my_line)], chunks, owner_pos[static_cast<size_t>(my_line)], channel, seg);
  // Cross phase: chunk k is allreduced among its owners in every line, in line order.
  for (int k = 0; k < width; ++k) {
    if (owner_rank[static_cast<size_t>(my_line)][static_cast<size_t>(k)] != b.rank()) continue;
    std::vector<int> group;
    for (int l = 0; l < lines; ++l) {
      if (owner_rank[static_cast<size_t>(l)][static_cast<size_t>(k)] >= 0) group.push_back(owner_rank[static_cast<size_t>(l)][static_cast<size_t>(k)]);
    }
    const Region& c = chunks[static_cast<size_t>(k)];
    auto sub_off = BalancedOffsets(c.count, static_cast<int>(group.size()));
    std::vector<Region> sub(group.size());
    std::vector<int> sub_owner(group.size());
    for (size_t j = 0; j < group.size(); ++j) {
      sub[j] = Region{BufferId::kData, c.offset + sub_off[j], sub_off[j + 1] - sub_off[j]};
      sub_owner[j] = static_cast<int>(j);
    }
    LineReduceScatter(b, group, sub, sub_owner, channel + 1, seg);
    LineAllgather(b, group, sub, sub_owner, channel + 1, seg);
  }
  LineAllgather(b, members[static_cast<size_t>(my_line)], chunks, owner_pos[static_cast<size_t>(my_line)], channel + 2, seg);
}

}  // namespace

Program BuildFtMeshAllreduce(const AllreduceParams& p) {
  const Topology* t = p.topology;
  if (!t || (t->kind() != Topology::Kind::kMesh && t->kind() != Topology::Kind::kTorus)) {
    throw InvalidArgumentError("ft-mesh needs a mesh topology (mesh:RxC, with its failed nodes)");
  }
  if (t->num_ranks() != p.nranks) {
    throw InvalidArgumentError(fmt::format("ft-mesh: the mesh has {} live nodes but the job has {} ranks",
                                           t->num_ranks(), p.nranks));
  }
  ProgramBuilder b(p.rank, p.nranks);
  Mesh m{t->rows(), t->cols(), t};
  int parts = p.count >= static_cast<uint64_t>(2 * p.nranks) ? 2 : 1;
  auto off = BalancedOffsets(p.count, parts);
  uint64_t seg = SegmentElems(p, 256 * 1024);
  for (int k = 0; k < parts; ++k) {
    MeshPart(b, m, /*transpose=*/k == 1, off[static_cast<size_t>(k)], off[static_cast<size_t>(k) + 1], 3 * k, seg);
  }
  return std::move(b).Finish();
}

}  // namespace parasol::collective
