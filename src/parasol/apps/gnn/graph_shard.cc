#include "parasol/apps/gnn/graph_shard.h"

#include <fmt/format.h>
#include <metis.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/core/flat_map.h"

namespace parasol::apps::gnn {

PartitionKind ParsePartitionKind(const std::string& name) {
  if (name == "hash") return PartitionKind::kHash;
  if (name == "range") return PartitionKind::kRange;
  if (name == "metis") return PartitionKind::kMetis;
  throw InvalidArgumentError(fmt::format("partition '{}' is not hash, range or metis", name));
}

namespace {

std::vector<int32_t> MetisParts(const Graph& g, int parts) {
  if (g.neighbours.size() > static_cast<size_t>(std::numeric_limits<idx_t>::max()))
    throw InvalidArgumentError(fmt::format("metis: {} edges are more than it can index", g.edges()));
  auto n = static_cast<idx_t>(g.vertices), constraints = idx_t{1}, nparts = static_cast<idx_t>(parts),
       cut = 0;
  std::vector<idx_t> xadj(g.edge_offsets.begin(), g.edge_offsets.end());
  std::vector<idx_t> adjncy(g.neighbours.begin(), g.neighbours.end());
  std::vector<idx_t> part(g.vertices, 0), options(METIS_NOPTIONS);
  METIS_SetDefaultOptions(options.data());
  options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_VOL;
  options[METIS_OPTION_SEED] = 1;
  const int status =
      METIS_PartGraphKway(&n, &constraints, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr, &nparts,
                          nullptr, nullptr, options.data(), &cut, part.data());
  if (status != METIS_OK) throw InternalError(fmt::format("metis: partitioning failed (status {})", status));
  return {part.begin(), part.end()};
}

}  // namespace

std::vector<int32_t> PartitionVertices(const Graph& g, int parts, PartitionKind kind) {
  if (kind == PartitionKind::kMetis && parts > 1) return MetisParts(g, parts);
  std::vector<int32_t> owner(g.vertices);
  for (size_t v = 0; v < g.vertices; ++v) {
    if (kind != PartitionKind::kRange) {  // kHash (and kMetis's single part)
      owner[v] = static_cast<int32_t>(MixKey(v) % static_cast<uint64_t>(parts));
    } else {
      owner[v] = static_cast<int32_t>(v * static_cast<uint64_t>(parts) / g.vertices);
    }
  }
  return owner;
}

size_t GraphShard::CountSplit(Split s) const {
  return static_cast<size_t>(std::count(split.begin(), split.end(), s));
}

namespace {

void CopyFeatures(const Graph& g, std::span<const uint32_t> vertices, GraphShard* s) {
  for (uint32_t v : vertices) {
    for (uint64_t k = g.feature_offsets[v]; k < g.feature_offsets[v + 1]; ++k) {
      s->feature_ids.push_back(g.feature_ids[k]);
      s->feature_values.push_back(g.feature_values[k]);
    }
    s->feature_offsets.push_back(s->feature_ids.size());
  }
}

// The ghosts (neighbours owned elsewhere, by owner then id) and what each peer needs of ours.
void PlanGhosts(const Graph& g, std::span<const int32_t> owner, GraphShard* s) {
  const auto ranks = static_cast<size_t>(s->ranks);
  std::vector<std::vector<uint32_t>> from(ranks), to(ranks);
  for (uint32_t v : s->owned) {
    for (uint32_t u : g.NeighboursOf(v)) {
      const auto o = static_cast<size_t>(owner[u]);
      if (o == static_cast<size_t>(s->rank)) continue;
      from[o].push_back(u);  // we read u from its owner
      to[o].push_back(v);    // and the owner reads v from us (the graph is undirected)
    }
  }
  s->send_counts.assign(ranks, 0);
  s->recv_counts.assign(ranks, 0);
  for (size_t r = 0; r < ranks; ++r) {
    for (auto* list : {&from[r], &to[r]}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    s->ghosts.insert(s->ghosts.end(), from[r].begin(), from[r].end());
    s->recv_counts[r] = from[r].size();
    s->send_counts[r] = to[r].size();
    for (uint32_t v : to[r]) {
      // Local row of an owned vertex: its place in the ascending owned list.
      s->send_rows.push_back(
          static_cast<uint32_t>(std::lower_bound(s->owned.begin(), s->owned.end(), v) - s->owned.begin()));
    }
  }
}

}  // namespace

GraphShard MakeShard(const Graph& g, std::span<const int32_t> owner, int rank, int ranks) {
  GraphShard s;
  s.rank = rank;
  s.ranks = ranks;
  s.features = g.features;
  s.classes = g.classes;
  uint64_t entries = 0, features = 0;
  for (size_t v = 0; v < g.vertices; ++v) {
    if (owner[v] != rank) continue;
    s.owned.push_back(static_cast<uint32_t>(v));
    entries += g.degree(static_cast<uint32_t>(v)) + 1;
  }
  for (uint32_t v : s.owned) {
    s.labels.push_back(g.labels[v]);
    s.split.push_back(g.split[v]);
  }
  PlanGhosts(g, owner, &s);
  // Sized up front: growing by doubling would hold twice the adjacency for a moment.
  for (auto* list : {&s.owned, &s.ghosts})
    for (uint32_t v : *list) features += g.feature_offsets[v + 1] - g.feature_offsets[v];
  s.feature_ids.reserve(features);
  s.feature_values.reserve(features);
  s.feature_offsets.reserve(s.local_rows() + 1);
  CopyFeatures(g, s.owned, &s);
  CopyFeatures(g, s.ghosts, &s);
  constexpr uint32_t kNotLocal = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> local(g.vertices, kNotLocal);  // global id -> local row
  for (size_t i = 0; i < s.owned.size(); ++i) local[s.owned[i]] = static_cast<uint32_t>(i);
  for (size_t i = 0; i < s.ghosts.size(); ++i) local[s.ghosts[i]] = static_cast<uint32_t>(s.owned.size() + i);
  auto inv_sqrt_degree = [&](uint32_t v) { return 1.0f / std::sqrt(static_cast<float>(g.degree(v) + 1)); };
  s.adj_columns.reserve(entries);
  s.adj_values.reserve(entries);
  s.adj_offsets.reserve(s.owned.size() + 1);
  for (uint32_t v : s.owned) {
    // The self-loop takes its place among the neighbours in id order.
    auto nbrs = g.NeighboursOf(v);
    auto self_at = std::lower_bound(nbrs.begin(), nbrs.end(), v);
    auto add = [&](uint32_t u) {
      s.adj_columns.push_back(local[u]);
      s.adj_values.push_back(inv_sqrt_degree(v) * inv_sqrt_degree(u));
    };
    for (auto it = nbrs.begin(); it != self_at; ++it) add(*it);
    add(v);
    for (auto it = self_at; it != nbrs.end(); ++it) add(*it);
    s.adj_offsets.push_back(s.adj_columns.size());
  }
  return s;
}

uint64_t RefreshGhosts(comm::Context& ctx, const GraphShard& s, size_t width, std::span<float> m,
                       std::vector<float>* scratch) {
  if (s.ranks == 1) return 0;
  scratch->resize(s.send_rows.size() * width);
  float* out = scratch->data();
  for (uint32_t row : s.send_rows) {
    std::memcpy(out, m.data() + static_cast<size_t>(row) * width, width * sizeof(float));
    out += width;
  }
  std::vector<uint64_t> send(s.send_counts), recv(s.recv_counts);
  for (auto& c : send) c *= width;
  for (auto& c : recv) c *= width;
  collective::Alltoallv(ctx, scratch->data(), send, m.data() + s.owned.size() * width, recv, DType::kFloat32);
  return s.send_rows.size() * width * sizeof(float);  // none to itself
}

uint64_t ReduceGhosts(comm::Context& ctx, const GraphShard& s, size_t width, std::span<float> m,
                      std::vector<float>* scratch) {
  if (s.ranks == 1) return 0;
  scratch->resize(s.send_rows.size() * width);
  std::vector<uint64_t> send(s.recv_counts), recv(s.send_counts);
  for (auto& c : send) c *= width;
  for (auto& c : recv) c *= width;
  collective::Alltoallv(ctx, m.data() + s.owned.size() * width, send, scratch->data(), recv, DType::kFloat32);
  const float* in = scratch->data();
  for (uint32_t row : s.send_rows) {
    float* to = m.data() + static_cast<size_t>(row) * width;
    for (size_t j = 0; j < width; ++j) to[j] += in[j];
    in += width;
  }
  return s.ghosts.size() * width * sizeof(float);
}

}  // namespace parasol::apps::gnn
