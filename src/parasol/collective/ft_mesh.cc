#include "parasol/collective/ft_mesh.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <tuple>

#include <fmt/format.h>

#include "parasol/collective/mesh_cycle.h"
#include "parasol/collective/multiring.h"
#include "parasol/collective/ring.h"
#include "parasol/collective/simulator.h"
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

// This rank's position in a line and its neighbours (-1 past the ends), or false if absent.
bool FindInLine(const std::vector<int>& line, int rank, int* i, int* left, int* right) {
  auto it = std::find(line.begin(), line.end(), rank);
  if (it == line.end() || line.size() < 2) return false;
  *i = static_cast<int>(it - line.begin());
  *left = *i > 0 ? line[static_cast<size_t>(*i - 1)] : -1;
  *right = *i + 1 < static_cast<int>(line.size()) ? line[static_cast<size_t>(*i + 1)] : -1;
  return true;
}

}  // namespace

void LineReduceScatter(ProgramBuilder& b, const std::vector<int>& line, const std::vector<Region>& chunks,
                       const std::vector<int>& owner, int channel, uint64_t seg, bool nearest_first) {
  const int len = static_cast<int>(line.size());
  int i, left, right;
  if (!FindInLine(line, b.rank(), &i, &left, &right)) return;
  // Every node sends rightwards the chunks owned further right, farthest first, and leftwards
  // those owned further left, farthest first; its neighbours receive them in that same order.
  std::vector<int> rightward, leftward, mine;
  for (int k : ByOwner(owner, /*descending=*/!nearest_first)) {
    if (owner[static_cast<size_t>(k)] > i) rightward.push_back(k);
  }
  for (int k : ByOwner(owner, /*descending=*/nearest_first)) {
    if (owner[static_cast<size_t>(k)] < i) leftward.push_back(k);
  }
  for (int k : ByOwner(owner, /*descending=*/false)) {
    if (owner[static_cast<size_t>(k)] == i) mine.push_back(k);
  }
  auto forward = [&](int k, int from, int to) {
    for (const Region& s : Segments(chunks[static_cast<size_t>(k)], seg)) {
      if (from >= 0) b.RecvReduce(from, s, channel);
      b.Send(to, s, channel);
    }
  };
  // Reductions into a chunk apply in program order (deterministic sums) and each holds a scratch
  // slot until it applies, so the side whose copy arrives first must come first, or its slots
  // stall the rest of its stream. Nearest-first, the left copy of chunk i leaves the left end at
  // step i-1 and the right copy the right end at step len-2-i; farthest-first, len-1-i and i.
  bool left_first = nearest_first ? i - 1 <= len - 2 - i : len - 1 - i <= i;
  int first = left_first ? left : right, second = left_first ? right : left;
  auto receive_mine = [&] {
    for (int k : mine) {
      for (const Region& s : Segments(chunks[static_cast<size_t>(k)], seg)) {
        if (first >= 0) b.RecvReduce(first, s, channel);
        if (second >= 0) b.RecvReduce(second, s, channel);
      }
    }
  };
  // A neighbour sends this node's own chunks last when farthest-first, first when nearest-first.
  if (nearest_first) receive_mine();
  Alternate(rightward, leftward, [&](int k) {
    if (owner[static_cast<size_t>(k)] > i)
      forward(k, left, right);
    else
      forward(k, right, left);
  });
  if (!nearest_first) receive_mine();
}

void LineAllgather(ProgramBuilder& b, const std::vector<int>& line, const std::vector<Region>& chunks,
                   const std::vector<int>& owner, int channel, uint64_t seg) {
  int i, left, right;
  if (!FindInLine(line, b.rank(), &i, &left, &right)) return;
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
    for (const Region& s : Segments(chunks[static_cast<size_t>(k)], seg)) {
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

// Whether a hole separates live members of a line (not just shortens it).
bool HasGap(int width, const std::function<int(int)>& at) {
  int first = width, last = -1;
  for (int q = 0; q < width; ++q) {
    if (at(q) >= 0) first = std::min(first, q), last = std::max(last, q);
  }
  for (int q = first + 1; q < last; ++q) {
    if (at(q) < 0) return true;
  }
  return false;
}

// Channels of one orientation, relative to its base.
constexpr int kLineRsChannel = 0, kCrossChannel = 1, kLineAgChannel = 2, kFoldChannel = 3, kUnfoldChannel = 4;
constexpr int kChannelsPerPart = 5;

// A line whose live members a hole separates either folds into its neighbouring lines or takes
// part with the messages that cross the hole routed around it. In a line reduce-scatter a link
// at position p carries about width-1-p chunks one way and p the other, and with segments
// pipelined it is busy from the start of the phase until its chunks have passed:
//  - folding hands the line's data to the lines on either side, in the order they use it and
//    split by the slack the crossing lines leave (mostly towards the nearer edge); it needs no
//    detour at all and measured best wherever it is possible;
//  - otherwise the line runs nearest-first (its links busy towards the end of the phase) so the
//    traffic it detours over its neighbour's links arrives when they have gone quiet.
// Edge lines cannot fold (the links across are saturated), nor can two neighbouring lines, and
// every live member of a folding line needs a live neighbour across. A hole at a line's end
// only shortens it.
std::vector<bool> FoldingLines(int lines, int width, const std::function<int(int, int)>& at) {
  std::vector<bool> fold(static_cast<size_t>(lines), false);
  for (int l = 1; l + 1 < lines; ++l) {
    if (fold[static_cast<size_t>(l) - 1]) continue;
    fold[static_cast<size_t>(l)] = HasGap(width, [&](int q) { return at(l, q); });
    for (int q = 0; q < width && fold[static_cast<size_t>(l)]; ++q) {
      if (at(l, q) >= 0 && at(l - 1, q) < 0 && at(l + 1, q) < 0) fold[static_cast<size_t>(l)] = false;
    }
  }
  return fold;
}

// Chunks in the order a line reduce-scatter first touches them at position q of a line of
// `width`: farthest owners first (chunk k > q at step width-1-k+q, k < q at step width-1-q+k),
// the node's own chunk last. Reversed, it is the order an allgather delivers them.
std::vector<int> NeedOrder(int width, int q) {
  std::vector<std::pair<int, int>> when;
  for (int k = 0; k < width; ++k) {
    int step = k > q ? width - 1 - k + q : k < q ? width - 1 - q + k : 2 * width;
    when.emplace_back(step, k);
  }
  std::stable_sort(when.begin(), when.end());
  std::vector<int> order;
  for (auto [step, k] : when) order.push_back(k);
  return order;
}

// Folds (or, with `unfold`, returns results to) the live members of folding lines. Member (l, q)
// hands its chunks to the members at q of the lines before and after it, in the order they need
// them, alternating in proportion to the slack the other orientation leaves on those links: the
// lines cut across this one load the link from position l towards the start with l chunks and
// the one towards the end with lines-1-l, out of lines-1.
void FoldLines(ProgramBuilder& b, const std::vector<bool>& fold, int lines, int width,
               const std::function<int(int, int)>& at, const std::vector<Region>& chunks, bool unfold,
               int channel, uint64_t seg) {
  for (int l = 0; l < lines; ++l) {
    if (!fold[static_cast<size_t>(l)]) continue;
    double share_up = static_cast<double>(lines - 1 - l) / (lines - 1);
    for (int q = 0; q < width; ++q) {
      int me = at(l, q), up = at(l - 1, q), down = at(l + 1, q);
      if (me < 0 || (b.rank() != me && b.rank() != up && b.rank() != down)) continue;
      auto order = NeedOrder(width, q);
      if (unfold) std::reverse(order.begin(), order.end());
      double given_up = 0;
      for (size_t j = 0; j < order.size(); ++j) {
        // Keep the share sent up so far closest to share_up (or all one way if a neighbour is gone).
        bool to_up = down < 0 || (up >= 0 && given_up < share_up * static_cast<double>(j + 1) - 0.5);
        if (to_up) given_up += 1;
        int peer = to_up ? up : down;
        const Region& c = chunks[static_cast<size_t>(order[j])];
        for (const Region& s : Segments(c, seg)) {
          if (b.rank() == me) {
            if (unfold)
              b.Recv(peer, s, channel);
            else
              b.Send(peer, s, channel);
          } else if (b.rank() == peer) {
            if (unfold)
              b.Send(me, s, channel);
            else
              b.RecvReduce(me, s, channel);
          }
        }
      }
    }
  }
}

// The lines that take part (not folded): their live members, and for each chunk the member that
// owns it (the live node nearest the chunk's home position; the left one on ties).
struct LineLayout {
  std::vector<std::vector<int>> members;
  std::vector<std::vector<int>> owner_rank;  // -1 in folded lines
  std::vector<std::vector<int>> owner_pos;
};

LineLayout LayoutLines(int lines, int width, const std::function<int(int, int)>& at,
                       const std::vector<bool>& fold) {
  LineLayout out;
  out.members.resize(static_cast<size_t>(lines));
  out.owner_rank.assign(static_cast<size_t>(lines), std::vector<int>(static_cast<size_t>(width), -1));
  out.owner_pos.assign(static_cast<size_t>(lines), std::vector<int>(static_cast<size_t>(width), -1));
  for (int l = 0; l < lines; ++l) {
    if (fold[static_cast<size_t>(l)]) continue;
    std::vector<int> alive_at;
    for (int q = 0; q < width; ++q) {
      if (at(l, q) >= 0) {
        out.members[static_cast<size_t>(l)].push_back(at(l, q));
        alive_at.push_back(q);
      }
    }
    for (int k = 0; k < width && !alive_at.empty(); ++k) {
      size_t best = 0;
      for (size_t j = 1; j < alive_at.size(); ++j) {
        if (std::abs(alive_at[j] - k) < std::abs(alive_at[best] - k)) best = j;
      }
      out.owner_pos[static_cast<size_t>(l)][static_cast<size_t>(k)] = static_cast<int>(best);
      out.owner_rank[static_cast<size_t>(l)][static_cast<size_t>(k)] =
          out.members[static_cast<size_t>(l)][best];
    }
  }
  return out;
}

// Chunk k of every taking-part line is allreduced along the line of its owners, in line order.
void CrossPhase(ProgramBuilder& b, const LineLayout& layout, int my_line, const std::vector<Region>& chunks,
                int channel, uint64_t seg) {
  const auto& mine = layout.owner_rank[static_cast<size_t>(my_line)];
  for (size_t k = 0; k < chunks.size(); ++k) {
    if (mine[k] != b.rank()) continue;
    std::vector<int> group;
    for (const auto& owners : layout.owner_rank) {
      if (owners[k] >= 0) group.push_back(owners[k]);
    }
    auto sub_off = BalancedOffsets(chunks[k].count, static_cast<int>(group.size()));
    std::vector<Region> sub(group.size());
    std::vector<int> sub_owner(group.size());
    for (size_t j = 0; j < group.size(); ++j) {
      sub[j] = Region{BufferId::kData, chunks[k].offset + sub_off[j], sub_off[j + 1] - sub_off[j]};
      sub_owner[j] = static_cast<int>(j);
    }
    LineReduceScatter(b, group, sub, sub_owner, channel, seg);
    LineAllgather(b, group, sub, sub_owner, channel, seg);
  }
}

// One orientation: lines are rows (transpose=false) or columns (transpose=true).
void MeshPart(ProgramBuilder& b, const Mesh& m, bool transpose, uint64_t begin, uint64_t end, int channel,
              uint64_t seg) {
  const int lines = transpose ? m.cols : m.rows;
  const int width = transpose ? m.rows : m.cols;
  std::function<int(int, int)> at = [&](int line, int pos) {
    if (line < 0 || line >= lines || pos < 0 || pos >= width) return -1;
    return transpose ? m.rank(pos, line) : m.rank(line, pos);
  };
  auto fold = FoldingLines(lines, width, at);
  auto chunk_off = BalancedOffsets(end - begin, width);
  std::vector<Region> chunks(static_cast<size_t>(width));
  for (size_t k = 0; k < chunks.size(); ++k) {
    chunks[k] = Region{BufferId::kData, begin + chunk_off[k], chunk_off[k + 1] - chunk_off[k]};
  }
  LineLayout layout = LayoutLines(lines, width, at, fold);
  FoldLines(b, fold, lines, width, at, chunks, /*unfold=*/false, channel + kFoldChannel, seg);
  int my_line = -1;
  for (int l = 0; l < lines && my_line < 0; ++l) {
    const auto& mem = layout.members[static_cast<size_t>(l)];
    if (std::find(mem.begin(), mem.end(), b.rank()) != mem.end()) my_line = l;
  }
  if (my_line >= 0) {
    const auto& members = layout.members[static_cast<size_t>(my_line)];
    const auto& owners = layout.owner_pos[static_cast<size_t>(my_line)];
    bool detours = HasGap(width, [&](int q) { return at(my_line, q); });
    LineReduceScatter(b, members, chunks, owners, channel + kLineRsChannel, seg, /*nearest_first=*/detours);
    CrossPhase(b, layout, my_line, chunks, channel + kCrossChannel, seg);
    LineAllgather(b, members, chunks, owners, channel + kLineAgChannel, seg);
  }
  FoldLines(b, fold, lines, width, at, chunks, /*unfold=*/true, channel + kUnfoldChannel, seg);
}

void CheckMesh(const AllreduceParams& p) {
  const Topology* t = p.topology;
  if (!t || (t->kind() != Topology::Kind::kMesh && t->kind() != Topology::Kind::kTorus)) {
    throw InvalidArgumentError("ft-mesh needs a mesh topology (mesh:RxC, with its failed nodes)");
  }
  if (t->num_ranks() != p.nranks) {
    throw InvalidArgumentError(fmt::format("ft-mesh: the mesh has {} live nodes but the job has {} ranks",
                                           t->num_ranks(), p.nranks));
  }
}

}  // namespace

Program BuildFtMeshAllreduce(const AllreduceParams& p, const FtMeshPlan& plan) {
  CheckMesh(p);
  if (!plan.ring.empty()) {
    if (plan.ring.size() != static_cast<size_t>(p.nranks)) {
      throw InvalidArgumentError(
          fmt::format("ft-mesh: a ring of {} ranks for a job of {}", plan.ring.size(), p.nranks));
    }
    // One ring each way round the cycle, each with half the data: every link of the cycle
    // carries one stream in each direction.
    return BuildRingsAllreduce(p, {plan.ring, std::vector<int>(plan.ring.rbegin(), plan.ring.rend())});
  }
  const Topology* t = p.topology;
  ProgramBuilder b(p.rank, p.nranks, p.from_input, p.count);
  Mesh m{t->rows(), t->cols(), t};
  int parts = p.count >= static_cast<uint64_t>(2 * p.nranks) ? 2 : 1;
  auto off = parts == 2 ? WeightedOffsets(p.count, {plan.rows_first_share, 1 - plan.rows_first_share})
                        : BalancedOffsets(p.count, 1);
  uint64_t seg = SegmentElems(p, kDefaultSegmentBytes);
  for (int k = 0; k < parts; ++k) {
    MeshPart(b, m, /*transpose=*/k == 1, off[static_cast<size_t>(k)], off[static_cast<size_t>(k) + 1],
             kChannelsPerPart * k, seg);
  }
  return std::move(b).Finish();
}

FtMeshPlan PlanFtMesh(const AllreduceParams& p) {
  CheckMesh(p);
  std::vector<FtMeshPlan> candidates{FtMeshPlan{}};  // the even split first: it wins ties
  bool holes = p.topology->num_ranks() != p.topology->rows() * p.topology->cols();
  if (holes && p.count >= static_cast<uint64_t>(2 * p.nranks)) {
    for (double share : {0.4, 0.6, 0.3, 0.7}) candidates.push_back(FtMeshPlan{share, {}});
  }
  if (auto ring = MeshCycle(*p.topology); ring && p.nranks > 1) candidates.push_back(FtMeshPlan{0.5, *ring});
  if (candidates.size() == 1) return candidates[0];
  FtMeshPlan best;
  double best_time = 0;
  for (const FtMeshPlan& plan : candidates) {
    std::vector<Program> programs;
    for (int r = 0; r < p.nranks; ++r) {
      AllreduceParams q = p;
      q.rank = r;
      programs.push_back(BuildFtMeshAllreduce(q, plan));
    }
    double time = Simulate(*p.topology, programs, {.elem_size = p.elem_size}).time_s;
    if (best_time == 0 || time < best_time * 0.99) {  // keep the earlier unless clearly beaten
      best_time = time;
      best = plan;
    }
  }
  return best;
}

Program BuildFtMeshAllreduce(const AllreduceParams& p) {
  return BuildFtMeshAllreduce(p, p.ft_mesh_plan ? *p.ft_mesh_plan : FtMeshPlan{});
}

}  // namespace parasol::collective
