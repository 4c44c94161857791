// Fractional packing of spanning trees (the optimisation behind Blink): find trees T with
// weights x_T maximising sum x_T subject to sum over trees using edge e of x_T <= capacity(e).
// Solved by multiplicative weights (Garg-Koenemann) with a minimum-spanning-tree oracle, then cut
// down to a few trees and re-weighted so the packing is feasible.
#pragma once

#include <utility>
#include <vector>

namespace parasol::collective {

struct PackEdge {
  int u = 0;
  int v = 0;
  double capacity = 0;  // per direction; any unit (the rate comes out in the same unit)
};

struct WeightedTree {
  std::vector<std::pair<int, int>> edges;  // n-1 undirected edges
  double weight = 0;
};

struct TreePacking {
  int nodes = 0;
  std::vector<WeightedTree> trees;
  double rate() const;
};

// REQUIRES: the graph on `n` nodes is connected. Keeps at most `max_trees` trees; `epsilon`
// trades solver time for closeness to the optimum (within about 2 epsilon of it, before trees
// are dropped). Deterministic.
TreePacking PackSpanningTrees(int n, const std::vector<PackEdge>& edges, double epsilon = 0.05,
                              int max_trees = 16);

}  // namespace parasol::collective
