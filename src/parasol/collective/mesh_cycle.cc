#include "parasol/collective/mesh_cycle.h"

#include "parasol/collective/region_ring.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <utility>

namespace parasol::collective {

namespace {

using NodePair = std::pair<int, int>;

constexpr long kSearchBudget = 200000;

// The ring under construction: each node's neighbours in it (two, once it is complete).
class RingEdges {
 public:
  explicit RingEdges(size_t nodes) : next_(nodes) {}

  void Add(int a, int b) {
    next_[static_cast<size_t>(a)].push_back(b);
    next_[static_cast<size_t>(b)].push_back(a);
  }
  bool Remove(int a, int b) { return Drop(a, b) && Drop(b, a); }
  bool Has(int a, int b) const {
    const auto& n = next_[static_cast<size_t>(a)];
    return std::find(n.begin(), n.end(), b) != n.end();
  }
  const std::vector<int>& at(int v) const { return next_[static_cast<size_t>(v)]; }

 private:
  bool Drop(int a, int b) {
    auto& n = next_[static_cast<size_t>(a)];
    auto it = std::find(n.begin(), n.end(), b);
    if (it == n.end()) return false;
    n.erase(it);
    return true;
  }

  std::vector<std::vector<int>> next_;
};

// Blocks already joined into one ring.
class BlockSets {
 public:
  explicit BlockSets(int n) : parent_(static_cast<size_t>(n)) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int Find(int b) {
    while (parent_[static_cast<size_t>(b)] != b)
      b = parent_[static_cast<size_t>(b)] = Find(parent_[static_cast<size_t>(b)]);
    return b;
  }
  // False if they were joined already (a second join would split the ring in two).
  bool Unite(int a, int b) {
    a = Find(a), b = Find(b);
    if (a == b) return false;
    parent_[static_cast<size_t>(a)] = b;
    return true;
  }

 private:
  std::vector<int> parent_;
};

// Blocks [b0, b1) x [c0, c1) (block coordinates) whose ring is searched for as a whole: the
// blocks with failed nodes that lie near each other, and one block around them.
struct BlockBox {
  int b0, b1, c0, c1;
  bool Holds(int bi, int bj) const { return bi >= b0 && bi < b1 && bj >= c0 && bj < c1; }
};

// How a block with failed nodes joins the ring on its own: the sides of whole blocks it opens,
// the links it adds, the two whole blocks whose rings it merges (other_block = -1: it hangs into
// one ring) and the diagonal pair joined through the network (first = -1: none).
struct Join {
  std::vector<NodePair> remove, add;
  int block = -1, other_block = -1;
  NodePair skip{-1, -1};
};

class CycleBuilder {
 public:
  explicit CycleBuilder(const Topology& t)
      : t_(t), rows_(t.rows()), cols_(t.cols()), brows_(rows_ / 2), bcols_(cols_ / 2) {}

  std::optional<std::vector<int>> Build();

 private:
  int Node(int r, int c) const { return r * cols_ + c; }
  bool Live(int r, int c) const {
    return r >= 0 && r < rows_ && c >= 0 && c < cols_ && !t_.failed(Node(r, c));
  }
  bool HasHole(int bi, int bj) const {
    return !Live(2 * bi, 2 * bj) || !Live(2 * bi, 2 * bj + 1) || !Live(2 * bi + 1, 2 * bj) ||
           !Live(2 * bi + 1, 2 * bj + 1);
  }
  int BlockOfNode(int node) const { return (node / cols_ / 2) * bcols_ + (node % cols_) / 2; }
  bool InRegion(int bi, int bj) const {
    return std::any_of(regions_.begin(), regions_.end(), [&](const BlockBox& g) { return g.Holds(bi, bj); });
  }
  // The block at (bi, bj) if it exists, has no failed node and is in no region, else -1.
  int FreeBlock(int bi, int bj) const {
    if (bi < 0 || bi >= brows_ || bj < 0 || bj >= bcols_ || HasHole(bi, bj) || InRegion(bi, bj)) return -1;
    return bi * bcols_ + bj;
  }
  // A block whose ring a join can open: a whole block, or one in a region (if the region's ring
  // turns out not to run along the side the join needs, that join fails).
  int RingBlock(int bi, int bj) const {
    if (bi < 0 || bi >= brows_ || bj < 0 || bj >= bcols_) return -1;
    return FreeBlock(bi, bj) >= 0 || InRegion(bi, bj) ? bi * bcols_ + bj : -1;
  }
  std::optional<std::vector<int>> BuildPlaced() const;
  std::vector<Join> JoinsOf(int bi, int bj) const;
  std::vector<Join> JoinsOfOneHole(int hr, int hc) const;
  BlockBox RegionAround(const BlockBox& box) const;
  void PlaceRegions(bool all_regions);
  std::optional<std::vector<int>> Try(const std::vector<Join>& joins,
                                      const std::vector<std::vector<NodePair>>& region_rings) const;
  void MergeBlocks(const std::vector<Join>& joins, RingEdges& ring, BlockSets& sets) const;
  std::optional<std::vector<int>> Walk(const RingEdges& ring) const;
  bool LinksUsedOnce(const std::vector<int>& ranks) const;

  const Topology& t_;
  int rows_, cols_, brows_, bcols_;
  std::vector<BlockBox> regions_;
  std::vector<std::pair<int, int>> joining_;  // holed blocks that join on their own
};

// A block with one failed node h keeps the path a-b-c around the corner opposite h. Towards h,
// a and c reach the blocks across h's two sides, and the nodes beside h there are joined through
// the block diagonal to h; away from h, a and c reach the blocks across the other two sides,
// whose nodes beside b are joined through b (or the block diagonal beyond it).
std::vector<Join> CycleBuilder::JoinsOfOneHole(int hr, int hc) const {
  const int dv = hr % 2 == 0 ? -1 : 1, dh = hc % 2 == 0 ? -1 : 1;  // outwards across h's sides
  const int r2 = hr ^ 1, c2 = hc ^ 1;
  const int a = Node(hr, c2), b = Node(r2, c2), c = Node(r2, hc);
  std::vector<Join> out;
  int y = RingBlock(hr / 2 + dv, hc / 2), z = RingBlock(hr / 2, hc / 2 + dh);
  if (y >= 0 && z >= 0) {
    int ya = Node(hr + dv, c2), yh = Node(hr + dv, hc), zc = Node(r2, hc + dh), zh = Node(hr, hc + dh);
    out.push_back({{{ya, yh}, {zc, zh}}, {{ya, a}, {a, b}, {b, c}, {c, zc}}, y, z, {yh, zh}});
  }
  y = RingBlock(hr / 2 - dv, hc / 2), z = RingBlock(hr / 2, hc / 2 - dh);
  if (y >= 0 && z >= 0) {
    int yc = Node(r2 - dv, hc), yb = Node(r2 - dv, c2), za = Node(hr, c2 - dh), zb = Node(r2, c2 - dh);
    out.push_back({{{yc, yb}, {za, zb}}, {{za, a}, {a, b}, {b, c}, {c, yc}}, y, z, {zb, yb}});
  }
  return out;
}

// One failed node, or two on one side (the other two nodes hang into the ring across from them).
std::vector<Join> CycleBuilder::JoinsOf(int bi, int bj) const {
  std::vector<std::pair<int, int>> holes, live;
  for (int r = 2 * bi; r < 2 * bi + 2; ++r) {
    for (int c = 2 * bj; c < 2 * bj + 2; ++c) (Live(r, c) ? live : holes).emplace_back(r, c);
  }
  if (holes.size() == 1) return JoinsOfOneHole(holes[0].first, holes[0].second);
  if (holes.size() != 2) return {};
  auto [p1r, p1c] = live[0];
  auto [p2r, p2c] = live[1];
  if (p1r != p2r && p1c != p2c) return {};
  int dr = p1r == p2r ? (p1r % 2 == 0 ? -1 : 1) : 0, dc = p1c == p2c ? (p1c % 2 == 0 ? -1 : 1) : 0;
  int n = RingBlock(bi + dr, bj + dc);
  if (n < 0) return {};
  int p1 = Node(p1r, p1c), p2 = Node(p2r, p2c), n1 = Node(p1r + dr, p1c + dc), n2 = Node(p2r + dr, p2c + dc);
  return {Join{{{n1, n2}}, {{n1, p1}, {p1, p2}, {p2, n2}}, n, -1, {-1, -1}}};
}

// Whether a and b come closer than `gap` blocks (0: they overlap; 1: they overlap or touch).
bool Near(const BlockBox& a, const BlockBox& b, int gap) {
  return a.b0 - b.b1 < gap && b.b0 - a.b1 < gap && a.c0 - b.c1 < gap && b.c0 - a.c1 < gap;
}

// `box` and one block around, at least three blocks each way (shifted inwards at the mesh's edge:
// a corner of 4x4 nodes with a hole beside it often has no ring).
BlockBox CycleBuilder::RegionAround(const BlockBox& box) const {
  auto grow = [](int lo, int hi, int n) {
    lo = std::max(lo - 1, 0), hi = std::min(hi + 1, n);
    if (hi - lo < 3) lo = std::max(0, std::min(lo, n - 3)), hi = std::min(n, lo + 3);
    return std::pair{lo, hi};
  };
  auto [b0, b1] = grow(box.b0, box.b1, brows_);
  auto [c0, c1] = grow(box.c0, box.c1, bcols_);
  return BlockBox{b0, b1, c0, c1};
}

// Holed blocks that touch (sides or corners), or that cannot join on their own, are searched as
// regions (RegionAround their bounding box). A holed block inside a region, and regions that overlap, become
// one; a region's growth can leave a block nearby without a join, which then becomes one too.
void CycleBuilder::PlaceRegions(bool all_regions) {
  struct Cluster {
    BlockBox box;  // the holed blocks' bounding box
    bool searched = false;
  };
  std::vector<Cluster> clusters;
  for (int bi = 0; bi < brows_; ++bi) {
    for (int bj = 0; bj < bcols_; ++bj) {
      if (HasHole(bi, bj)) clusters.push_back({{bi, bi + 1, bj, bj + 1}, all_regions});
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    regions_.clear();
    for (const Cluster& c : clusters) {
      if (c.searched) regions_.push_back(RegionAround(c.box));
    }
    for (size_t i = 0; i < clusters.size() && !changed; ++i) {
      for (size_t j = i + 1; j < clusters.size() && !changed; ++j) {
        const Cluster &a = clusters[i], &b = clusters[j];
        // Touching blocks, or a block or region meeting a region, are one cluster.
        bool meet = Near(a.box, b.box, 1) ||
                    (a.searched && Near(RegionAround(a.box), b.searched ? RegionAround(b.box) : b.box, 0)) ||
                    (b.searched && Near(RegionAround(b.box), a.box, 0));
        if (!meet) continue;
        clusters[i] = {{std::min(a.box.b0, b.box.b0), std::max(a.box.b1, b.box.b1),
                        std::min(a.box.c0, b.box.c0), std::max(a.box.c1, b.box.c1)},
                       true};
        clusters.erase(clusters.begin() + static_cast<long>(j));
        changed = true;
      }
    }
    for (Cluster& c : clusters) {
      if (changed || c.searched) continue;
      c.searched = c.box.b1 - c.box.b0 > 1 || c.box.c1 - c.box.c0 > 1 || JoinsOf(c.box.b0, c.box.c0).empty();
      changed = c.searched;
    }
  }
  joining_.clear();
  for (const Cluster& c : clusters) {
    if (!c.searched) joining_.emplace_back(c.box.b0, c.box.c0);
  }
}

// Holed blocks join on their own where they can; if no combination of their joins makes one
// ring, every holed block is searched as (part of) a region instead.
std::optional<std::vector<int>> CycleBuilder::Build() {
  if (rows_ < 2 || cols_ < 2 || rows_ % 2 != 0 || cols_ % 2 != 0) return std::nullopt;
  for (bool all_regions : {false, true}) {
    PlaceRegions(all_regions);
    if (auto ring = BuildPlaced()) return ring;
  }
  return std::nullopt;
}

std::optional<std::vector<int>> CycleBuilder::BuildPlaced() const {
  std::vector<std::vector<NodePair>> region_rings;
  for (const BlockBox& g : regions_) {
    auto edges = FindRegionRing(t_, {2 * g.b0, 2 * g.b1, 2 * g.c0, 2 * g.c1}, kSearchBudget);
    if (!edges) return std::nullopt;
    region_rings.push_back(std::move(*edges));
  }
  std::vector<std::vector<Join>> choices;
  size_t combos = 1;
  for (auto [bi, bj] : joining_) {
    choices.push_back(JoinsOf(bi, bj));
    combos *= choices.back().size();
    if (combos == 0 || combos > 4096) return std::nullopt;
  }
  // Each joining block has at most two ways; try every combination (few holes: few tries).
  for (size_t k = 0; k < combos; ++k) {
    std::vector<Join> joins;
    size_t rest = k;
    for (const auto& c : choices) {
      joins.push_back(c[rest % c.size()]);
      rest /= c.size();
    }
    if (auto ring = Try(joins, region_rings)) return ring;
  }
  return std::nullopt;
}

std::optional<std::vector<int>> CycleBuilder::Try(
    const std::vector<Join>& joins, const std::vector<std::vector<NodePair>>& region_rings) const {
  RingEdges ring(static_cast<size_t>(rows_ * cols_));
  BlockSets sets(brows_ * bcols_);
  for (size_t i = 0; i < regions_.size(); ++i) {
    const BlockBox& g = regions_[i];
    for (auto [u, v] : region_rings[i]) ring.Add(u, v);
    for (int bi = g.b0; bi < g.b1; ++bi) {
      for (int bj = g.c0; bj < g.c1; ++bj) sets.Unite(bi * bcols_ + bj, g.b0 * bcols_ + g.c0);
    }
  }
  for (int bi = 0; bi < brows_; ++bi) {
    for (int bj = 0; bj < bcols_; ++bj) {
      if (FreeBlock(bi, bj) < 0) continue;
      int r = 2 * bi, c = 2 * bj;
      ring.Add(Node(r, c), Node(r, c + 1));
      ring.Add(Node(r, c + 1), Node(r + 1, c + 1));
      ring.Add(Node(r + 1, c + 1), Node(r + 1, c));
      ring.Add(Node(r + 1, c), Node(r, c));
    }
  }
  for (size_t i = 0; i < joins.size(); ++i) {
    const Join& j = joins[i];
    auto [bi, bj] = joining_[i];
    sets.Unite(bi * bcols_ + bj, j.block);  // the holed block takes no part in merges
    if (j.other_block >= 0 && !sets.Unite(j.block, j.other_block)) return std::nullopt;
    for (auto [u, v] : j.remove) {
      if (!ring.Remove(u, v)) return std::nullopt;
    }
    for (auto [u, v] : j.add) ring.Add(u, v);
    if (j.skip.first >= 0) ring.Add(j.skip.first, j.skip.second);
  }
  MergeBlocks(joins, ring, sets);
  for (int b = 0; b < brows_ * bcols_; ++b) {
    if (sets.Find(b) != sets.Find(0)) return std::nullopt;
  }
  auto nodes = Walk(ring);
  if (!nodes) return std::nullopt;
  std::vector<int> ranks;
  for (int v : *nodes) ranks.push_back(t_.rank_of_node(v));
  if (!LinksUsedOnce(ranks)) return std::nullopt;
  return ranks;
}

// Merges the rings of neighbouring blocks (or regions) along a spanning tree: the facing sides
// u1-u2 and v1-v2, where both rings have them, give way to u1-v1 and u2-v2.
void CycleBuilder::MergeBlocks(const std::vector<Join>& joins, RingEdges& ring, BlockSets& sets) const {
  // A block that joins on its own is not a ring of four: its sides are not there to trade.
  auto mergeable = [&](int bi, int bj) { return FreeBlock(bi, bj) >= 0 || InRegion(bi, bj); };
  // Nor may two blocks merge across the links a join's routed pair takes.
  std::set<NodePair> crossed;
  for (const Join& j : joins) {
    if (j.skip.first < 0) continue;
    int a = t_.rank_of_node(j.skip.first), b = t_.rank_of_node(j.skip.second);
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      for (uint32_t id : t_.Route(from, to)) {
        auto link = t_.link(id);
        crossed.insert(std::minmax(BlockOfNode(link.src), BlockOfNode(link.dst)));
      }
    }
  }
  for (int bi = 0; bi < brows_; ++bi) {
    for (int bj = 0; bj < bcols_; ++bj) {
      for (auto [di, dj] : {std::pair{0, 1}, std::pair{1, 0}}) {
        if (bi + di >= brows_ || bj + dj >= bcols_ || !mergeable(bi, bj) || !mergeable(bi + di, bj + dj))
          continue;
        int p = bi * bcols_ + bj, q = (bi + di) * bcols_ + bj + dj;
        if (sets.Find(p) == sets.Find(q) || crossed.count(std::minmax(p, q))) continue;
        int r = 2 * bi + di, c = 2 * bj + dj;
        int u1 = Node(r, c), u2 = di ? Node(r, c + 1) : Node(r + 1, c);
        int v1 = u1 + (di ? cols_ : 1), v2 = u2 + (di ? cols_ : 1);
        if (!ring.Has(u1, u2) || !ring.Has(v1, v2)) continue;
        ring.Remove(u1, u2);
        ring.Remove(v1, v2);
        ring.Add(u1, v1);
        ring.Add(u2, v2);
        sets.Unite(p, q);
      }
    }
  }
}

// The live nodes in ring order, if every one has two neighbours and one ring holds them all.
std::optional<std::vector<int>> CycleBuilder::Walk(const RingEdges& ring) const {
  int live = 0, start = -1;
  for (int v = 0; v < rows_ * cols_; ++v) {
    if (t_.failed(v)) continue;
    if (ring.at(v).size() != 2) return std::nullopt;
    ++live;
    if (start < 0) start = v;
  }
  std::vector<int> order{start};
  int prev = start, cur = ring.at(start)[0];
  while (cur != start) {
    if (static_cast<int>(order.size()) >= live) return std::nullopt;
    order.push_back(cur);
    int next = ring.at(cur)[0] == prev ? ring.at(cur)[1] : ring.at(cur)[0];
    prev = cur, cur = next;
  }
  if (static_cast<int>(order.size()) != live) return std::nullopt;
  return order;
}

bool CycleBuilder::LinksUsedOnce(const std::vector<int>& ranks) const {
  std::vector<int> uses(t_.num_link_ids(), 0);
  for (size_t i = 0; i < ranks.size(); ++i) {
    int a = ranks[i], b = ranks[(i + 1) % ranks.size()];
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      for (uint32_t id : t_.Route(from, to)) {
        if (++uses[id] > 1) return false;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<std::vector<int>> MeshCycle(const Topology& t) {
  if (t.kind() != Topology::Kind::kMesh && t.kind() != Topology::Kind::kTorus) return std::nullopt;
  return CycleBuilder(t).Build();
}

}  // namespace parasol::collective
