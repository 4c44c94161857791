#include "parasol/collective/mesh_cycle.h"

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "parasol/collective/region_ring.h"
#include "parasol/collective/topology.h"

namespace parasol::collective {
namespace {

struct Cell {
  int r, c;
};

Topology MeshWithout(int rows, int cols, const std::vector<Cell>& holes) {
  std::vector<int> failed;
  for (Cell h : holes) failed.push_back(h.r * cols + h.c);
  return Topology::Parse("mesh:" + std::to_string(rows) + "x" + std::to_string(cols), {.failed = failed});
}

// Checks, from the topology's routes alone, what a bidirectional ring over `ring` needs: every
// live rank exactly once; consecutive ranks one link apart, or two links apart beside a failed
// node; and no directed link carrying two of the ring's streams (each step is sent both ways).
void ExpectOneStreamPerLink(const Topology& t, const std::vector<int>& ring, const std::string& what) {
  ASSERT_EQ(ring.size(), static_cast<size_t>(t.num_ranks())) << what;
  std::set<int> seen(ring.begin(), ring.end());
  ASSERT_EQ(seen.size(), ring.size()) << what << ": a rank twice";
  std::map<uint32_t, int> uses;
  for (size_t i = 0; i < ring.size(); ++i) {
    int a = ring[i], b = ring[(i + 1) % ring.size()];
    int na = t.node_of_rank(a), nb = t.node_of_rank(b);
    int dr = std::abs(na / t.cols() - nb / t.cols()), dc = std::abs(na % t.cols() - nb % t.cols());
    ASSERT_TRUE(dr + dc == 1 || (dr == 1 && dc == 1)) << what << ": nodes " << na << " and " << nb;
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      EXPECT_EQ(t.Route(from, to).size(), static_cast<size_t>(dr + dc)) << what;
      for (uint32_t id : t.Route(from, to)) {
        EXPECT_EQ(++uses[id], 1) << what << ": link " << t.link(id).src << "->" << t.link(id).dst
                                 << " carries two streams";
      }
    }
  }
}

TEST(MeshCycle, WholeMeshIsOneRingOfNeighbours) {
  for (auto [rows, cols] : {std::pair{2, 2}, std::pair{2, 4}, std::pair{6, 4}, std::pair{16, 16}}) {
    Topology t = MeshWithout(rows, cols, {});
    auto ring = MeshCycle(t);
    ASSERT_TRUE(ring) << rows << "x" << cols;
    ExpectOneStreamPerLink(t, *ring, t.name());
  }
}

// The failure sets ft-mesh's lines handled worst (issue 46): holes on the edge, in a corner, in
// neighbouring rows or columns, and together in one block or in blocks that touch. Every set
// leaves each live node two links (with one, no allreduce keeps its bandwidth).
TEST(MeshCycle, HolesAnywhereLeaveOneStreamPerLink) {
  const std::vector<std::vector<Cell>> sets16 = {
      {{7, 7}},                              // interior
      {{0, 5}},                              // top edge
      {{9, 15}},                             // right edge
      {{0, 0}, {0, 15}, {15, 0}, {15, 15}},  // the four corners
      {{0, 5}, {3, 2}, {14, 6}},             // edges and interior
      {{6, 7}, {9, 6}, {12, 13}, {13, 13}},  // neighbouring lines, two holes in a block's side
      {{2, 14}, {13, 8}, {14, 12}},          // neighbouring lines
      {{13, 9}, {14, 7}},                    // holes in blocks that touch at a corner
      {{4, 8}, {5, 9}},                      // two holes diagonal in one block
      {{1, 1}, {1, 2}, {2, 1}, {2, 2}},      // a 2x2 cluster
  };
  for (const auto& holes : sets16) {
    Topology t = MeshWithout(16, 16, holes);
    auto ring = MeshCycle(t);
    std::string what = "mesh:16x16 without " + std::to_string(holes.size()) + " nodes from (" +
                       std::to_string(holes[0].r) + "," + std::to_string(holes[0].c) + ")";
    ASSERT_TRUE(ring) << what;
    ExpectOneStreamPerLink(t, *ring, what);
  }
  Topology t = MeshWithout(32, 32, {{0, 17}, {16, 31}, {18, 30}, {31, 0}});
  auto ring = MeshCycle(t);
  ASSERT_TRUE(ring);
  ExpectOneStreamPerLink(t, *ring, "mesh:32x32");
}

// Holes at (1,2) and (1,4): (0,2), (0,4) and (1,3) have two links each, one of them to (0,3), so
// a ring would need three neighbours of (0,3). A side of odd length has no 2x2 blocks.
TEST(MeshCycle, NoneWhereNoRingExists) {
  EXPECT_FALSE(MeshCycle(MeshWithout(16, 16, {{1, 2}, {1, 4}})));
  EXPECT_FALSE(MeshCycle(MeshWithout(5, 4, {})));
  EXPECT_FALSE(MeshCycle(Topology::Parse("ring:8")));
}

TEST(RegionRing, GoesAroundAHoleThroughOneRoutedPair) {
  Topology t = MeshWithout(6, 6, {{2, 2}});
  auto edges = FindRegionRing(t, {0, 6, 0, 6}, 100000);
  ASSERT_TRUE(edges);
  ASSERT_EQ(edges->size(), 35u);
  std::vector<int> ring;
  int diagonals = 0;
  for (size_t i = 0; i < edges->size(); ++i) {
    auto [a, b] = (*edges)[i];
    ASSERT_EQ(b, (*edges)[(i + 1) % edges->size()].first) << "edges out of ring order";
    ring.push_back(t.rank_of_node(a));
    diagonals += std::abs(a - b) != 1 && std::abs(a - b) != 6;
  }
  EXPECT_EQ(diagonals, 1);  // 35 nodes: odd, so one step must join two nodes of one colour
  ExpectOneStreamPerLink(t, ring, "mesh:6x6 without (2,2)");
}

TEST(RegionRing, NoneInAPocketOrPastItsBudget) {
  Topology t = MeshWithout(6, 8, {{1, 2}, {1, 4}});
  EXPECT_FALSE(FindRegionRing(t, {0, 6, 0, 8}, 1000000));
  Topology whole = MeshWithout(8, 8, {});
  EXPECT_FALSE(FindRegionRing(whole, {0, 8, 0, 8}, 3));
  EXPECT_TRUE(FindRegionRing(whole, {0, 8, 0, 8}, 100000));
}

}  // namespace
}  // namespace parasol::collective
