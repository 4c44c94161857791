#include "parasol/collective/tree_packing.h"

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
std::vector<int> MinimumSpanningTree(int n, const std::vector<PackEdge>& edges,
                                     const std::vector<double>& length, std::vector<int>& order) {
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return length[static_cast<size_t>(a)] != length[static_cast<size_t>(b)]
               ? length[static_cast<size_t>(a)] < length[static_cast<size_t>(b)]
               : a < b;
  });
  Dsu dsu(n);
  std::vector<int> tree;
  for (int e : order) {
    if (dsu.Union(edges[static_cast<size_t>(e)].u, edges[static_cast<size_t>(e)].v)) tree.push_back(e);
    if (static_cast<int>(tree.size()) == n - 1) break;
  }
  return tree;
}

}  // namespace

double TreePacking::rate() const {
  double r = 0;
  for (const auto& t : trees) r += t.weight;
  return r;
}

TreePacking PackSpanningTrees(int n, const std::vector<PackEdge>& edges, double eps, int max_trees) {
  TreePacking out;
  out.nodes = n;
  if (n < 2) return out;
  const size_t m = edges.size();
  double cmax = 0;
  for (const auto& e : edges) cmax = std::max(cmax, e.capacity);
  std::vector<double> cap(m);
  for (size_t i = 0; i < m; ++i) cap[i] = edges[i].capacity / cmax;  // normalised

  // Multiplicative weights: lengths grow on edges the chosen trees use.
  const double delta = (1 + eps) / std::pow((1 + eps) * static_cast<double>(m), 1 / eps);
  std::vector<double> length(m);
  for (size_t i = 0; i < m; ++i) length[i] = delta / cap[i];
  std::map<std::vector<int>, double> weight;  // tree (sorted edge ids) -> weight
  std::vector<int> order(m);
  for (int iter = 0; iter < 1000000; ++iter) {
    double total = 0;
    for (size_t i = 0; i < m; ++i) total += cap[i] * length[i];
    if (total >= 1) break;
    auto tree = MinimumSpanningTree(n, edges, length, order);
    if (static_cast<int>(tree.size()) != n - 1) {
      throw InvalidArgumentError(fmt::format("tree packing: the graph of {} nodes is not connected", n));
    }
    double c = 1e300;
    for (int e : tree) c = std::min(c, cap[static_cast<size_t>(e)]);
    for (int e : tree) length[static_cast<size_t>(e)] *= 1 + eps * c / cap[static_cast<size_t>(e)];
    std::sort(tree.begin(), tree.end());
    weight[tree] += c;
  }

  // Keep the heaviest trees, scale them to feasibility, then fill what capacity is left.
  std::vector<std::pair<std::vector<int>, double>> trees(weight.begin(), weight.end());
  std::stable_sort(trees.begin(), trees.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (static_cast<int>(trees.size()) > max_trees) trees.resize(static_cast<size_t>(max_trees));
  std::vector<double> load(m, 0);
  for (const auto& [t, w] : trees) {
    for (int e : t) load[static_cast<size_t>(e)] += w;
  }
  double scale = 1e300;
  for (size_t i = 0; i < m; ++i) {
    if (load[i] > 0) scale = std::min(scale, cap[i] / load[i]);
  }
  std::fill(load.begin(), load.end(), 0);
  for (auto& [t, w] : trees) {
    w *= scale;
    for (int e : t) load[static_cast<size_t>(e)] += w;
  }
  for (auto& [t, w] : trees) {
    double slack = 1e300;
    for (int e : t) slack = std::min(slack, cap[static_cast<size_t>(e)] - load[static_cast<size_t>(e)]);
    if (slack > 0) {
      w += slack;
      for (int e : t) load[static_cast<size_t>(e)] += slack;
    }
  }
  for (const auto& [t, w] : trees) {
    WeightedTree wt;
    wt.weight = w * cmax;
    for (int e : t) wt.edges.emplace_back(edges[static_cast<size_t>(e)].u, edges[static_cast<size_t>(e)].v);
    out.trees.push_back(std::move(wt));
  }
  return out;
}

}  // namespace parasol::collective
