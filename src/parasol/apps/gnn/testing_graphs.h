// Graphs the GNN's tests build on, small enough to check by hand.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "parasol/apps/gnn/graph.h"

namespace parasol::apps::gnn {

// The bundled Cora citation graph's folder (data/cora; PARASOL_DATA_DIR is gnn_test's).
inline std::string CoraDir() { return std::string(PARASOL_DATA_DIR) + "/cora"; }

// A small random graph: 9 vertices, 6 features (some zero), a ring plus chords, 3 classes.
inline Graph SmallTestGraph() {
  Graph g;
  g.vertices = 9;
  g.features = 6;
  g.classes = 3;
  std::mt19937_64 rng(7);
  for (size_t v = 0; v < g.vertices; ++v) {
    for (uint32_t f = 0; f < g.features; ++f) {
      if ((rng() & 3) == 0) continue;
      g.feature_ids.push_back(f);
      g.feature_values.push_back(static_cast<float>(rng() % 100) / 50.0f - 1.0f);
    }
    g.feature_offsets.push_back(g.feature_ids.size());
    g.labels.push_back(static_cast<int32_t>(v % 3));
    g.split.push_back(Split::kTrain);
  }
  std::vector<std::vector<uint32_t>> adj(g.vertices);
  auto link = [&](uint32_t a, uint32_t b) {
    adj[a].push_back(b);
    adj[b].push_back(a);
  };
  for (uint32_t v = 0; v < g.vertices; ++v) link(v, (v + 1) % 9);
  link(0, 4);
  link(2, 7);
  for (auto& list : adj) {
    std::sort(list.begin(), list.end());
    g.neighbours.insert(g.neighbours.end(), list.begin(), list.end());
    g.edge_offsets.push_back(g.neighbours.size());
  }
  return g;
}

}  // namespace parasol::apps::gnn
