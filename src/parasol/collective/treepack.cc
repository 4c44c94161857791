#include "parasol/collective/treepack.h"

#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "parasol/collective/ring.h"
#include "parasol/collective/topology.h"
#include "parasol/core/error.h"

namespace parasol::collective {

namespace {

struct Rooted {
  int root = 0;
  std::vector<int> parent;                 // -1 at the root
  std::vector<std::vector<int>> children;  // ascending
};

// Roots the tree at its centre (least eccentricity, lowest id on ties) so pipelines are short.
Rooted RootTree(int n, const WeightedTree& t) {
  std::vector<std::vector<int>> adj(static_cast<size_t>(n));
  for (auto [u, v] : t.edges) {
    adj[static_cast<size_t>(u)].push_back(v);
    adj[static_cast<size_t>(v)].push_back(u);
  }
  auto bfs = [&](int src, std::vector<int>& parent) {
    std::vector<int> dist(static_cast<size_t>(n), -1);
    parent.assign(static_cast<size_t>(n), -1);
    std::deque<int> q{src};
    dist[static_cast<size_t>(src)] = 0;
    int far = 0;
    while (!q.empty()) {
      int v = q.front();
      q.pop_front();
      far = std::max(far, dist[static_cast<size_t>(v)]);
      for (int w : adj[static_cast<size_t>(v)]) {
        if (dist[static_cast<size_t>(w)] < 0) {
          dist[static_cast<size_t>(w)] = dist[static_cast<size_t>(v)] + 1;
          parent[static_cast<size_t>(w)] = v;
          q.push_back(w);
        }
      }
    }
    return far;
  };
  Rooted r;
  int best = n + 1;
  std::vector<int> parent;
  for (int v = 0; v < n; ++v) {
    int ecc = bfs(v, parent);
    if (ecc < best) {
      best = ecc;
      r.root = v;
    }
  }
  bfs(r.root, r.parent);
  r.children.resize(static_cast<size_t>(n));
  for (int v = 0; v < n; ++v) {
    if (r.parent[static_cast<size_t>(v)] >= 0) r.children[static_cast<size_t>(r.parent[static_cast<size_t>(v)])].push_back(v);
  }
  return r;
}

}  // namespace

TreePacking PackTopology(const Topology& topology, int max_trees) {
  // Undirected edges between ranks; a pair joined in both directions counts once, with the
  // smaller of its two per-direction bandwidths.
  std::map<std::pair<int, int>, std::pair<double, int>> pairs;
  for (const auto& l : topology.RankLinks()) {
    auto key = std::minmax(l.src, l.dst);
    auto& [bw, dirs] = pairs[{key.first, key.second}];
    bw = dirs == 0 ? l.bytes_per_s : std::min(bw, l.bytes_per_s);
    ++dirs;
  }
  std::vector<PackEdge> edges;
  for (const auto& [key, v] : pairs) {
    if (v.second == 2) edges.push_back(PackEdge{key.first, key.second, v.first});
  }
  return PackSpanningTrees(topology.num_ranks(), edges, 0.05, max_trees);
}

Program BuildTreepackAllreduce(const AllreduceParams& p, const TreePacking& packing) {
  if (packing.nodes != p.nranks) {
    throw InvalidArgumentError(fmt::format("treepack: packing is for {} ranks, job has {}", packing.nodes, p.nranks));
  }
  ProgramBuilder b(p.rank, p.nranks);
  if (p.nranks < 2) return std::move(b).Finish();
  std::vector<double> weights;
  for (const auto& t : packing.trees) weights.push_back(t.weight);
  auto off = WeightedOffsets(p.count, weights);
  uint64_t seg = SegmentElems(p, 256 * 1024);
  for (size_t t = 0; t < packing.trees.size(); ++t) {
    Rooted tree = RootTree(p.nranks, packing.trees[t]);
    int channel = static_cast<int>(t);
    int parent = tree.parent[static_cast<size_t>(p.rank)];
    const auto& kids = tree.children[static_cast<size_t>(p.rank)];
    auto segs = Segments(off[t], off[t + 1], seg);
    for (const Region& s : segs) {  // reduce up
      for (int c : kids) b.RecvReduce(c, s, channel);
      if (parent >= 0) b.Send(parent, s, channel);
    }
    for (const Region& s : segs) {  // broadcast down
      if (parent >= 0) b.Recv(parent, s, channel);
      for (int c : kids) b.Send(c, s, channel);
    }
  }
  return std::move(b).Finish();
}

Program BuildTreepackAllreduce(const AllreduceParams& p) {
  if (p.topology) return BuildTreepackAllreduce(p, PackTopology(*p.topology));
  Topology full = Topology::Parse(fmt::format("full:{}", p.nranks));
  return BuildTreepackAllreduce(p, PackTopology(full));
}

}  // namespace parasol::collective
