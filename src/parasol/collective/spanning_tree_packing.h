// Fractional packing of spanning trees (the optimisation behind Blink): find trees T with
// weights x_T maximising sum x_T subject to, for every resource r (a physical link),
// sum_T x_T * uses_r(T) <= capacity(r), where a tree uses a resource once for each of its edges
// routed over it. Solved by multiplicative weights (Garg-Koenemann) with a minimum-spanning-tree
// oracle, then cut down to a few trees and re-weighted so the packing is feasible.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace parasol::collective {

struct PackProblem {
  int nodes = 0;
  std::vector<std::pair<int, int>> edges;             // candidate tree edges (undirected)
  std::vector<std::vector<uint32_t>> edge_resources;  // resources each edge uses, per tree that has it
  std::vector<double> capacity;                       // per resource, any unit
};

struct PackEdge {
  int u = 0;
  int v = 0;
  double capacity = 0;
};

struct WeightedTree {
  std::vector<std::pair<int, int>> edges;  // nodes-1 undirected edges
  double weight = 0;
};

struct TreePacking {
  int nodes = 0;
  std::vector<WeightedTree> trees;
  double rate() const;
};

// REQUIRES: the candidate edges connect all nodes. Keeps at most `max_trees` trees; `epsilon`
// trades solver time for closeness to the optimum. Deterministic.
TreePacking PackSpanningTrees(const PackProblem& problem, double epsilon = 0.05, int max_trees = 16);
// A plain graph: every edge is a resource of its own.
TreePacking PackSpanningTrees(int n, const std::vector<PackEdge>& edges, double epsilon = 0.05,
                              int max_trees = 16);

}  // namespace parasol::collective
