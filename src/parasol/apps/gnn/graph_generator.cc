#include "parasol/apps/gnn/graph_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

namespace {

double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }

void Check(const GeneratorOptions& o) {
  if (o.vertices < 2 || o.vertices > (uint64_t{1} << 31))
    throw InvalidArgumentError(fmt::format("vertices {}: between 2 and 2^31", o.vertices));
  if (o.classes < 1 || static_cast<size_t>(o.classes) > o.vertices)
    throw InvalidArgumentError(fmt::format("classes {}: between 1 and the vertex count", o.classes));
  if (o.features < static_cast<size_t>(o.classes) || o.features_per_vertex < 1 ||
      o.features_per_vertex > o.features)
    throw InvalidArgumentError("features: at least one per class, and at least as many as per vertex");
  for (double f : {o.feature_signal, o.edge_signal, o.train_fraction, o.val_fraction, o.test_fraction})
    if (!(f >= 0 && f <= 1)) throw InvalidArgumentError("signals and fractions lie in [0, 1]");
  if (o.train_fraction + o.val_fraction + o.test_fraction > 1)
    throw InvalidArgumentError("train, validation and test fractions add up to more than 1");
  if (!(o.degree_exponent > 2)) throw InvalidArgumentError("degree exponent: above 2");
}

// Community c's vertices are [first(c), first(c + 1)). Below 2^31 x 2^16: no overflow.
size_t First(const GeneratorOptions& o, int c) {
  const auto k = static_cast<uint64_t>(o.classes);
  return (o.vertices * static_cast<uint64_t>(c) + k - 1) / k;
}

void DrawVertices(const GeneratorOptions& o, std::mt19937_64& rng, Graph* g) {
  const size_t words = o.features / static_cast<size_t>(o.classes);  // each community's own words
  std::vector<uint32_t> mine;
  for (int c = 0; c < o.classes; ++c) {
    for (size_t v = First(o, c); v < First(o, c + 1); ++v) {
      mine.clear();
      while (mine.size() < o.features_per_vertex) {
        const bool own = Uniform(rng) < o.feature_signal;
        const uint64_t f = own ? static_cast<uint64_t>(c) * words + rng() % words : rng() % o.features;
        if (std::find(mine.begin(), mine.end(), f) == mine.end()) mine.push_back(static_cast<uint32_t>(f));
      }
      std::sort(mine.begin(), mine.end());
      g->feature_ids.insert(g->feature_ids.end(), mine.begin(), mine.end());
      g->feature_offsets.push_back(g->feature_ids.size());
      g->labels[v] = c;
      const double u = Uniform(rng);
      g->split[v] = u < o.train_fraction                                      ? Split::kTrain
                    : u < o.train_fraction + o.val_fraction                   ? Split::kValidation
                    : u < o.train_fraction + o.val_fraction + o.test_fraction ? Split::kTest
                                                                              : Split::kUnlabeled;
    }
  }
  g->feature_values.assign(g->feature_ids.size(), 1.0f);
}

// Chung-Lu: endpoints drawn in proportion to Pareto weights, so degrees follow the same power
// law; a share edge_signal of the targets is drawn within the source's community.
std::vector<std::pair<uint32_t, uint32_t>> DrawEdges(const GeneratorOptions& o, std::mt19937_64& rng) {
  std::vector<double> cumulative(o.vertices + 1, 0);
  const double shape = 1 / (o.degree_exponent - 1);
  const double cap = std::sqrt(static_cast<double>(o.vertices));  // no vertex takes a fixed share of edges
  for (size_t v = 0; v < o.vertices; ++v)
    cumulative[v + 1] = cumulative[v] + std::min(cap, std::pow(1 - Uniform(rng), -shape));
  // A vertex in [lo, hi) drawn by weight.
  auto draw = [&](size_t lo, size_t hi) {
    const double x = cumulative[lo] + Uniform(rng) * (cumulative[hi] - cumulative[lo]);
    const auto it = std::upper_bound(cumulative.begin() + static_cast<std::ptrdiff_t>(lo) + 1,
                                     cumulative.begin() + static_cast<std::ptrdiff_t>(hi) + 1, x);
    return static_cast<uint32_t>(std::min<size_t>(static_cast<size_t>(it - cumulative.begin()) - 1, hi - 1));
  };
  std::vector<std::pair<uint32_t, uint32_t>> edges(o.edges);
  for (auto& [u, v] : edges) {
    u = draw(0, o.vertices);
    const int c = static_cast<int>(static_cast<uint64_t>(u) * static_cast<uint64_t>(o.classes) / o.vertices);
    v = Uniform(rng) < o.edge_signal ? draw(First(o, c), First(o, c + 1)) : draw(0, o.vertices);
  }
  return edges;
}

}  // namespace

GeneratedGraph GenerateGraph(const GeneratorOptions& o) {
  Check(o);
  std::mt19937_64 rng(o.seed);
  GeneratedGraph out;
  Graph& g = out.graph;
  g.vertices = o.vertices;
  g.features = o.features;
  g.classes = o.classes;
  g.labels.resize(o.vertices);
  g.split.resize(o.vertices);
  DrawVertices(o, rng, &g);
  out.edges = DrawEdges(o, rng);
  SetEdges(out.edges, &g);
  return out;
}

}  // namespace parasol::apps::gnn
