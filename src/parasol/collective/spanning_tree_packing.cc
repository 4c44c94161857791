#include "parasol/collective/spanning_tree_packing.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::collective {

namespace {

struct Dsu {
  explicit Dsu(int n) : parent(static_cast<size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int Find(int x) {
    while (parent[static_cast<size_t>(x)] != x) {
      parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
      x = parent[static_cast<size_t>(x)];
    }
    return x;
  }
  bool Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return false;
    parent[static_cast<size_t>(a)] = b;
    return true;
  }
  std::vector<int> parent;
};

// Kruskal: edge ids of a minimum spanning tree under `length` (ties by id, so deterministic).
std::vector<int> MinimumSpanningTree(const PackProblem& pb, const std::vector<double>& length,
                                     std::vector<int>& order) {
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return length[static_cast<size_t>(a)] != length[static_cast<size_t>(b)]
               ? length[static_cast<size_t>(a)] < length[static_cast<size_t>(b)]
               : a < b;
  });
  Dsu dsu(pb.nodes);
  std::vector<int> tree;
  for (int e : order) {
    if (dsu.Union(pb.edges[static_cast<size_t>(e)].first, pb.edges[static_cast<size_t>(e)].second))
      tree.push_back(e);
    if (static_cast<int>(tree.size()) == pb.nodes - 1) break;
  }
  return tree;
}

// How many times the tree uses each resource it touches.
std::vector<std::pair<uint32_t, int>> Uses(const PackProblem& pb, const std::vector<int>& tree) {
  std::map<uint32_t, int> uses;
  for (int e : tree) {
    for (uint32_t r : pb.edge_resources[static_cast<size_t>(e)]) ++uses[r];
  }
  return {uses.begin(), uses.end()};
}

}  // namespace

double TreePacking::rate() const {
  double r = 0;
  for (const auto& t : trees) r += t.weight;
  return r;
}

TreePacking PackSpanningTrees(int n, const std::vector<PackEdge>& edges, double eps, int max_trees) {
  PackProblem pb;
  pb.nodes = n;
  for (size_t i = 0; i < edges.size(); ++i) {
    pb.edges.emplace_back(edges[i].u, edges[i].v);
    pb.edge_resources.push_back({static_cast<uint32_t>(i)});
    pb.capacity.push_back(edges[i].capacity);
  }
  return PackSpanningTrees(pb, eps, max_trees);
}

namespace {

using TreeWeights = std::vector<std::pair<std::vector<int>, double>>;  // (sorted edge ids, weight)

// Garg-Koenemann: repeatedly add the spanning tree that is shortest under resource lengths that
// grow with use. Capacities are normalised to at most 1.
TreeWeights MultiplicativeWeights(const PackProblem& pb, const std::vector<double>& cap, double eps) {
  const size_t m = cap.size();
  const double delta = (1 + eps) / std::pow((1 + eps) * static_cast<double>(m), 1 / eps);
  std::vector<double> length(m), edge_length(pb.edges.size());
  for (size_t i = 0; i < m; ++i) length[i] = delta / cap[i];
  std::map<std::vector<int>, double> weight;
  std::vector<int> order(pb.edges.size());
  for (int iter = 0; iter < 1000000; ++iter) {
    double total = 0;
    for (size_t i = 0; i < m; ++i) total += cap[i] * length[i];
    if (total >= 1) break;
    for (size_t e = 0; e < pb.edges.size(); ++e) {
      edge_length[e] = 0;
      for (uint32_t r : pb.edge_resources[e]) edge_length[e] += length[r];
    }
    auto tree = MinimumSpanningTree(pb, edge_length, order);
    if (static_cast<int>(tree.size()) != pb.nodes - 1) {
      throw InvalidArgumentError(
          fmt::format("tree packing: the graph of {} nodes is not connected", pb.nodes));
    }
    auto uses = Uses(pb, tree);
    double c = 1e300;
    for (auto [r, k] : uses) c = std::min(c, cap[r] / k);
    for (auto [r, k] : uses) length[r] *= 1 + eps * c * k / cap[r];
    std::sort(tree.begin(), tree.end());
    weight[tree] += c;
  }
  return {weight.begin(), weight.end()};
}

// Keeps the heaviest trees, scales them so no resource is over capacity, then gives each tree in
// turn whatever capacity its resources have left.
void PruneAndReweight(const PackProblem& pb, const std::vector<double>& cap, int max_trees,
                      TreeWeights& trees) {
  std::stable_sort(trees.begin(), trees.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (static_cast<int>(trees.size()) > max_trees) trees.resize(static_cast<size_t>(max_trees));
  std::vector<std::vector<std::pair<uint32_t, int>>> uses;
  for (const auto& t : trees) uses.push_back(Uses(pb, t.first));
  std::vector<double> load(cap.size(), 0);
  for (size_t t = 0; t < trees.size(); ++t) {
    for (auto [r, k] : uses[t]) load[r] += trees[t].second * k;
  }
  double scale = 1e300;
  for (size_t i = 0; i < cap.size(); ++i) {
    if (load[i] > 0) scale = std::min(scale, cap[i] / load[i]);
  }
  std::fill(load.begin(), load.end(), 0);
  for (size_t t = 0; t < trees.size(); ++t) {
    trees[t].second *= scale;
    for (auto [r, k] : uses[t]) load[r] += trees[t].second * k;
  }
  for (size_t t = 0; t < trees.size(); ++t) {
    double slack = 1e300;
    for (auto [r, k] : uses[t]) slack = std::min(slack, (cap[r] - load[r]) / k);
    if (slack <= 0) continue;
    trees[t].second += slack;
    for (auto [r, k] : uses[t]) load[r] += slack * k;
  }
}

}  // namespace

TreePacking PackSpanningTrees(const PackProblem& pb, double eps, int max_trees) {
  TreePacking out;
  out.nodes = pb.nodes;
  if (pb.nodes < 2) return out;
  double cmax = 0;
  for (double c : pb.capacity) cmax = std::max(cmax, c);
  std::vector<double> cap(pb.capacity.size());
  for (size_t i = 0; i < cap.size(); ++i) cap[i] = pb.capacity[i] / cmax;
  TreeWeights trees = MultiplicativeWeights(pb, cap, eps);
  PruneAndReweight(pb, cap, max_trees, trees);
  for (const auto& [t, w] : trees) {
    WeightedTree wt;
    wt.weight = w * cmax;
    for (int e : t) wt.edges.push_back(pb.edges[static_cast<size_t>(e)]);
    out.trees.push_back(std::move(wt));
  }
  return out;
}

}  // namespace parasol::collective
