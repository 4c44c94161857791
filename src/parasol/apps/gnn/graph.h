// A graph with features and labels on its vertices, as node-classification benchmarks give it
// (Cora, Citeseer, Pubmed in the Planetoid split): what `parasol gnn` trains on.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace parasol::apps::gnn {

enum class Split : uint8_t { kTrain, kValidation, kTest, kUnlabeled };

// Vertices 0..vertices-1. Features and edges in CSR form: vertex v's features are
// [feature_offsets[v], feature_offsets[v + 1]) of feature_ids/feature_values (ids ascending);
// its neighbours are [edge_offsets[v], edge_offsets[v + 1]) of neighbours (ascending, no v itself,
// no repeats; the graph is undirected, so u lists v when v lists u).
struct Graph {
  size_t vertices = 0;
  size_t features = 0;  // feature ids are 0..features-1
  int classes = 0;      // labels are 0..classes-1
  std::vector<uint64_t> feature_offsets{0};
  std::vector<uint32_t> feature_ids;
  std::vector<float> feature_values;
  std::vector<int32_t> labels;
  std::vector<Split> split;
  std::vector<uint64_t> edge_offsets{0};
  std::vector<uint32_t> neighbours;

  size_t edges() const { return neighbours.size() / 2; }  // undirected
  size_t degree(size_t v) const { return edge_offsets[v + 1] - edge_offsets[v]; }
  std::span<const uint32_t> NeighboursOf(size_t v) const {
    return {neighbours.data() + edge_offsets[v], degree(v)};
  }
  size_t CountSplit(Split s) const;
};

// NAME.content: one line per vertex, "vertex label split feature:value ...", split one of train,
// val, test, unlabeled; vertex ids are 0..n-1 in any order, each once. Feature ids as written
// are renumbered densely in ascending order (the unused ones carry no information), so nothing
// is sized by a number from the file. NAME.cites: "u v" per line, an undirected edge; repeats and
// self-loops are dropped. ParseError "path:line: what is wrong" for anything else (an unknown
// vertex, a repeated feature, a malformed field); "path: no vertices" for an empty file.
// A path ending in ".edges" is read as a binary edge list instead (WriteEdgesBinary's format);
// its count is checked against the file's size and its checksum verified, and "path: edge K:
// ..." names a vertex that is not in the .content file.
Graph ReadPlanetoid(const std::string& content_path, const std::string& edges_path);

// The graph in `dir`: its one NAME.content and NAME.cites beside it (or, when there is no
// NAME.cites, NAME.edges). IoError when the folder holds no .content file or several.
Graph ReadGraphDir(const std::string& dir);

// NAME.content as ReadPlanetoid reads it (feature ids as the graph numbers them). Atomic.
void WriteContent(const std::string& path, const Graph& g);
// A binary edge list for graphs too big for text: the 8 bytes "PSGEDGE1", the edge count
// (uint64), the edges as pairs of uint32 vertex ids, then FNV-1a 64 of everything before (all
// little-endian, as this machine writes them). Atomic.
void WriteEdgesBinary(const std::string& path, std::span<const std::pair<uint32_t, uint32_t>> edges);

// Sets g's adjacency from undirected edges (u, v) (each vertex below g->vertices): both
// directions, ascending, self-loops and repeats dropped.
void SetEdges(std::vector<std::pair<uint32_t, uint32_t>> edges, Graph* g);

// The name a split is written with in NAME.content.
const char* SplitName(Split s);

}  // namespace parasol::apps::gnn
