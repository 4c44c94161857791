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
    if (r.parent[static_cast<size_t>(v)] >= 0)
      r.children[static_cast<size_t>(r.parent[static_cast<size_t>(v)])].push_back(v);
  }
  return r;
}

}  // namespace

TreePacking PackTopology(const Topology& topology, int max_trees) {
  // Candidate tree edges: pairs of ranks whose route passes no other rank (directly linked, or
  // through switches only). A tree edge carries reduce traffic one way and broadcast traffic the
  // other, so it uses the links of both routes; trees routed over a shared link share it.
  PackProblem pb;
  pb.nodes = topology.num_ranks();
  std::map<uint32_t, uint32_t> resource_of_link;
  auto resource = [&](uint32_t link) {
    auto [it, added] = resource_of_link.emplace(link, static_cast<uint32_t>(pb.capacity.size()));
    if (added) pb.capacity.push_back(topology.link(link).bytes_per_s);
    return it->second;
  };
  auto passes_rank = [&](const std::vector<uint32_t>& route) {
    for (size_t i = 0; i + 1 < route.size(); ++i) {
      if (topology.rank_of_node(topology.link(route[i]).dst) >= 0) return true;
    }
    return false;
  };
  for (int u = 0; u < pb.nodes; ++u) {
    for (int v = u + 1; v < pb.nodes; ++v) {
      const auto& there = topology.Route(u, v);
      const auto& back = topology.Route(v, u);
      if (passes_rank(there) || passes_rank(back)) continue;
      std::vector<uint32_t> uses;
      for (uint32_t l : there) uses.push_back(resource(l));
      for (uint32_t l : back) uses.push_back(resource(l));
      pb.edges.emplace_back(u, v);
      pb.edge_resources.push_back(std::move(uses));
    }
  }
  return PackSpanningTrees(pb, 0.05, max_trees);
}

Program BuildTreepackAllreduce(const AllreduceParams& p, const TreePacking& packing) {
  if (packing.nodes != p.nranks) {
    throw InvalidArgumentError(
        fmt::format("treepack: packing is for {} ranks, job has {}", packing.nodes, p.nranks));
  }
  ProgramBuilder b(p.rank, p.nranks, p.from_input, p.count);
  if (p.nranks < 2) return std::move(b).Finish();
  std::vector<double> weights;
  for (const auto& t : packing.trees) weights.push_back(t.weight);
  auto off = WeightedOffsets(p.count, weights);
  uint64_t seg = SegmentElems(p, kDefaultSegmentBytes);
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
