#include "parasol/collective/spanning_tree_packing.h"

#include <map>

#include <gtest/gtest.h>

#include "parasol/collective/topology.h"
#include "parasol/collective/treepack.h"
#include "parasol/core/error.h"

namespace parasol::collective {
namespace {

// Every tree spans the graph and no edge carries more than its capacity.
void ExpectFeasible(int n, const std::vector<PackEdge>& edges, const TreePacking& p) {
  std::map<std::pair<int, int>, double> cap, load;
  for (const auto& e : edges) cap[std::minmax(e.u, e.v)] += e.capacity;
  for (const auto& t : p.trees) {
    EXPECT_EQ(static_cast<int>(t.edges.size()), n - 1);
    for (auto [u, v] : t.edges) load[std::minmax(u, v)] += t.weight;
  }
  for (const auto& [e, l] : load) EXPECT_LE(l, cap[e] * (1 + 1e-9)) << e.first << "-" << e.second;
}

std::vector<PackEdge> Complete(int n) {
  std::vector<PackEdge> edges;
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v) edges.push_back({u, v, 1.0});
  return edges;
}

// Known optima (Nash-Williams/Tutte): K_n packs n/2 trees; a cycle of n, n/(n-1).
TEST(TreePacking, ReachesKnownOptimaOnSmallGraphs) {
  for (int n : {4, 6}) {
    auto edges = Complete(n);
    auto p = PackSpanningTrees(n, edges, 0.02);
    ExpectFeasible(n, edges, p);
    EXPECT_GE(p.rate(), 0.97 * n / 2.0) << "K" << n;
    EXPECT_LE(p.rate(), n / 2.0 + 1e-9);
  }
  std::vector<PackEdge> cycle;
  for (int i = 0; i < 5; ++i) cycle.push_back({i, (i + 1) % 5, 1.0});
  auto p = PackSpanningTrees(5, cycle, 0.02);
  ExpectFeasible(5, cycle, p);
  EXPECT_NEAR(p.rate(), 5.0 / 4, 0.03);
}

TEST(TreePacking, BottleneckEdgeLimitsATree) {
  std::vector<PackEdge> path = {{0, 1, 3.0}, {1, 2, 5.0}};
  auto p = PackSpanningTrees(3, path);
  ExpectFeasible(3, path, p);
  EXPECT_NEAR(p.rate(), 3.0, 1e-9);
}

// The DGX-1 hybrid cube-mesh: 16 NVLinks on 8 GPUs, so at most 16/7 trees' worth.
TEST(TreePacking, Dgx1NvlinkPackingNearOptimal) {
  auto t = Topology::Parse("dgx1");
  auto p = PackTopology(t);
  EXPECT_GE(p.rate(), 0.95 * 16.0 / 7 * 20e9);
  EXPECT_LE(p.rate(), 16.0 / 7 * 20e9 * (1 + 1e-9));
  EXPECT_LE(p.trees.size(), 16u);
}

TEST(TreePacking, DisconnectedGraphIsAnError) {
  EXPECT_THROW(PackSpanningTrees(4, {{0, 1, 1}, {2, 3, 1}}), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::collective
