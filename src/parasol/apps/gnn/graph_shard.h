// One rank's part of a graph partitioned by vertex: the vertices it owns, the "ghost" copies of
// the other ranks' vertices its edges reach, the normalised adjacency of its rows, and the plan
// that refreshes ghost rows from their owners (one alltoallv per matrix).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "parasol/apps/gnn/graph.h"
#include "parasol/comm/context.h"

namespace parasol::apps::gnn {

enum class PartitionKind { kHash, kRange, kMetis };
// "hash", "range" or "metis"; InvalidArgumentError otherwise.
PartitionKind ParsePartitionKind(const std::string& name);

// The owner of each vertex among `parts`: kHash spreads vertices by a mix of their id (balanced,
// blind to the edges), kRange gives each part a contiguous run of ids (graphs numbered by
// community keep most edges inside a part), kMetis asks METIS for balanced parts with the least
// communication volume (the ghost rows exchanged; deterministic, minutes for 10^8 edges).
std::vector<int32_t> PartitionVertices(const Graph& g, int parts, PartitionKind kind);

struct GraphShard {
  int rank = 0, ranks = 1;
  size_t features = 0;
  int classes = 0;
  // Local rows: owned vertices [0, owned.size()) in ascending id, then ghosts ordered by owner
  // rank and id (so the rows a peer sends land as one block).
  std::vector<uint32_t> owned, ghosts;
  // Local rows' features (CSR over owned rows, then ghosts): a GCN projects its ghosts' inputs
  // itself instead of receiving their first layer's rows.
  std::vector<uint64_t> feature_offsets{0};
  std::vector<uint32_t> feature_ids;
  std::vector<float> feature_values;
  std::vector<int32_t> labels;
  std::vector<Split> split;
  // The renormalised adjacency D^-1/2 (A + I) D^-1/2 of the owned rows over local columns, each
  // row's entries in ascending global id (every partition sums in one order). Symmetric, which
  // the backward pass relies on.
  std::vector<uint64_t> adj_offsets{0};
  std::vector<uint32_t> adj_columns;
  std::vector<float> adj_values;
  // Ghost refresh: send_rows lists, peer by peer, the owned rows each peer holds as ghosts;
  // send_counts/recv_counts are rows per peer.
  std::vector<uint32_t> send_rows;
  std::vector<uint64_t> send_counts, recv_counts;

  size_t local_rows() const { return owned.size() + ghosts.size(); }
  // The global id of local row `row`.
  uint32_t global_id(size_t row) const {
    return row < owned.size() ? owned[row] : ghosts[row - owned.size()];
  }
  // Owned vertices in split `s` on this rank.
  size_t CountSplit(Split s) const;
};

GraphShard MakeShard(const Graph& g, std::span<const int32_t> owner, int rank, int ranks);

// Fills rows [owned, owned + ghosts) of `m` (local_rows x width, row-major) from their owners.
// Every rank calls it together. `scratch` holds the packed rows between calls. Returns the bytes
// this rank sent to other ranks.
uint64_t RefreshGhosts(comm::Context& ctx, const GraphShard& s, size_t width, std::span<float> m,
                       std::vector<float>* scratch);
// The reverse: adds rows [owned, owned + ghosts) of `m` into their owners' rows (a gradient that
// reached a ghost belongs to its vertex). Ghost rows are left as they were. Returns the bytes sent.
uint64_t ReduceGhosts(comm::Context& ctx, const GraphShard& s, size_t width, std::span<float> m,
                      std::vector<float>* scratch);

}  // namespace parasol::apps::gnn
