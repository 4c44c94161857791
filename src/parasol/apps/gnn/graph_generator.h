// Big graphs for benchmarks with an answer to learn: vertices in planted communities (the labels),
// power-law degrees, most edges inside a community, bag-of-words features that lean towards the
// community's own words. Neither the features nor the edges alone give the label away, so a GCN
// beats a model of the features alone, as on citation graphs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "parasol/apps/gnn/graph.h"

namespace parasol::apps::gnn {

struct GeneratorOptions {
  size_t vertices = 1'000'000;
  size_t edges = 20'000'000;  // drawn; repeats and self-loops are then dropped
  int classes = 16;           // communities; vertex v is in community v * classes / vertices
  size_t features = 512;
  size_t features_per_vertex = 16;
  double feature_signal = 0.3;   // share of a vertex's words drawn from its community's words
  double edge_signal = 0.7;      // share of edges drawn inside the source's community
  double degree_exponent = 2.5;  // degree distribution ~ d^-exponent (Chung-Lu weights)
  double train_fraction = 0.05, val_fraction = 0.05, test_fraction = 0.1;  // the rest: unlabeled
  uint64_t seed = 1;
};

struct GeneratedGraph {
  Graph graph;
  std::vector<std::pair<uint32_t, uint32_t>> edges;  // as drawn, for WriteEdgesBinary
};

// InvalidArgumentError for options that cannot make a graph (no vertices, fractions over 1, ...).
GeneratedGraph GenerateGraph(const GeneratorOptions& o);

}  // namespace parasol::apps::gnn
