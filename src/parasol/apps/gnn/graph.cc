#include "parasol/apps/gnn/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/section_file.h"

namespace parasol::apps::gnn {

namespace {

namespace fs = std::filesystem;

struct Feature {
  uint32_t raw_id;
  float value;
};

// One line of NAME.content, kept until every vertex id is known to be in range.
struct VertexLine {
  uint64_t id;
  int32_t label;
  Split split;
  long line;
  uint64_t first_feature;  // into the features read so far
};

Split ParseSplit(const LineReader& in, std::string_view field) {
  if (field == "train") return Split::kTrain;
  if (field == "val") return Split::kValidation;
  if (field == "test") return Split::kTest;
  if (field == "unlabeled") return Split::kUnlabeled;
  if (field.empty()) in.Fail("missing split (train, val, test or unlabeled)");
  in.Fail(fmt::format("split '{}' is not train, val, test or unlabeled", field));
}

// "id:value" fields to the end of the line, ids unique within the line.
void ReadFeatures(const LineReader& in, std::string_view line, size_t pos, std::vector<Feature>* out) {
  const size_t first = out->size();
  for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) {
    const size_t colon = f.find(':');
    if (colon == std::string_view::npos) in.Fail(fmt::format("feature '{}' is not id:value", f));
    const auto id = in.Number<uint32_t>(f.substr(0, colon), "feature id");
    const auto value = in.Number<float>(f.substr(colon + 1), "feature value");
    out->push_back({id, value});
  }
  auto begin = out->begin() + static_cast<std::ptrdiff_t>(first);
  std::sort(begin, out->end(), [](const Feature& a, const Feature& b) { return a.raw_id < b.raw_id; });
  auto repeat = std::adjacent_find(begin, out->end(),
                                   [](const Feature& a, const Feature& b) { return a.raw_id == b.raw_id; });
  if (repeat != out->end()) in.Fail(fmt::format("feature {} is given twice", repeat->raw_id));
}

// Labels as written are kept (a class with no vertex is allowed), bounded so that the model's
// output layer stays small.
constexpr int32_t kMaxClasses = 1 << 16;

void ReadContent(const std::string& path, Graph* g) {
  LineReader in(path, {.comment = '#', .skip_blank = true});
  std::vector<VertexLine> lines;
  std::vector<Feature> features;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    VertexLine v{};
    v.id = in.Number<uint64_t>(NextField(line, pos), "vertex id");
    const std::string_view label = NextField(line, pos);
    v.split = ParseSplit(in, NextField(line, pos));
    // Planetoid's data sets as commonly converted give their unlabeled vertices -1 or a label no
    // split uses: an unlabeled vertex keeps a label only when it is a class (-1 otherwise).
    if (v.split == Split::kUnlabeled) {
      v.label = ParseNumber(label, &v.label) && v.label >= 0 && v.label < kMaxClasses ? v.label : -1;
    } else {
      v.label = in.NumberIn<int32_t>(label, "label", 0, kMaxClasses - 1);
    }
    v.line = in.line_number();
    v.first_feature = features.size();
    ReadFeatures(in, line, pos, &features);
    lines.push_back(v);
  }
  if (lines.empty()) throw ParseError(path, 0, "no vertices");
  const size_t n = lines.size();
  std::vector<uint32_t> order(n, std::numeric_limits<uint32_t>::max());  // vertex id -> line index
  for (size_t i = 0; i < n; ++i) {
    const VertexLine& v = lines[i];
    if (v.id >= n) {
      throw ParseError(
          path, v.line,
          fmt::format("vertex {} is out of range: {} vertices are numbered 0 to {}", v.id, n, n - 1));
    }
    if (order[v.id] != std::numeric_limits<uint32_t>::max()) {
      throw ParseError(
          path, v.line,
          fmt::format("vertex {} is listed twice (first at line {})", v.id, lines[order[v.id]].line));
    }
    order[v.id] = static_cast<uint32_t>(i);
  }
  std::vector<uint32_t> raw_ids;
  raw_ids.reserve(features.size());
  for (const Feature& f : features) raw_ids.push_back(f.raw_id);
  std::sort(raw_ids.begin(), raw_ids.end());
  raw_ids.erase(std::unique(raw_ids.begin(), raw_ids.end()), raw_ids.end());
  g->vertices = n;
  g->features = raw_ids.size();
  g->labels.resize(n);
  g->split.resize(n);
  g->feature_offsets.assign(1, 0);
  g->feature_ids.reserve(features.size());
  g->feature_values.reserve(features.size());
  int32_t max_label = 0;
  for (size_t v = 0; v < n; ++v) {
    const size_t i = order[v];
    const uint64_t end = i + 1 < n ? lines[i + 1].first_feature : features.size();
    for (uint64_t k = lines[i].first_feature; k < end; ++k) {
      const auto dense =
          std::lower_bound(raw_ids.begin(), raw_ids.end(), features[k].raw_id) - raw_ids.begin();
      g->feature_ids.push_back(static_cast<uint32_t>(dense));
      g->feature_values.push_back(features[k].value);
    }
    g->feature_offsets.push_back(g->feature_ids.size());
    g->labels[v] = lines[i].label;
    g->split[v] = lines[i].split;
    max_label = std::max(max_label, lines[i].label);
  }
  g->classes = max_label + 1;
}

void ReadCites(const std::string& path, Graph* g) {
  LineReader in(path, {.comment = '#', .skip_blank = true});
  const uint64_t n = g->vertices;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    uint32_t ends[2];
    for (uint32_t& e : ends) {
      const std::string_view field = NextField(line, pos);
      const auto id = in.Number<uint64_t>(field, "vertex id");
      if (id >= n) in.Fail(fmt::format("vertex {} is not in the .content file ({} vertices)", id, n));
      e = static_cast<uint32_t>(id);
    }
    if (const std::string_view extra = NextField(line, pos); !extra.empty())
      in.Fail(fmt::format("unexpected field '{}' after the two vertices of an edge", extra));
    edges.emplace_back(ends[0], ends[1]);
  }
  SetEdges(std::move(edges), g);
}

// NAME.edges: a section file (core/section_file.h) with one section of (u, v) pairs.
constexpr char kEdgesKind[] = "graph-edges";

void ReadEdgesBinary(const std::string& path, Graph* g) {
  const SectionReader in(path, kEdgesKind);
  std::vector<std::pair<uint32_t, uint32_t>> edges(in.Count("edges"));  // bounded by the file's size
  in.ReadInto("edges", edges.data(), sizeof(edges[0]), edges.size());
  for (size_t k = 0; k < edges.size(); ++k) {
    const uint32_t bad = std::max(edges[k].first, edges[k].second);
    if (bad >= g->vertices) {
      in.Fail(
          fmt::format("edge {}: vertex {} is not in the .content file ({} vertices)", k, bad, g->vertices));
    }
  }
  SetEdges(std::move(edges), g);
}

}  // namespace

void SetEdges(std::vector<std::pair<uint32_t, uint32_t>> edges, Graph* g) {
  // Bucketed by vertex (a counting sort: big graphs have tens of millions of edges), then each
  // list sorted and merged.
  const size_t n = g->vertices;
  std::vector<uint64_t> offsets(n + 1, 0);
  for (const auto& [u, v] : edges) {
    if (u == v) continue;
    ++offsets[u + 1];
    ++offsets[v + 1];
  }
  for (size_t v = 0; v < n; ++v) offsets[v + 1] += offsets[v];
  std::vector<uint32_t> lists(offsets[n]);
  std::vector<uint64_t> fill(offsets.begin(), offsets.end() - 1);
  for (const auto& [u, v] : edges) {
    if (u == v) continue;
    lists[fill[u]++] = v;
    lists[fill[v]++] = u;
  }
  edges = {};
  g->edge_offsets.assign(n + 1, 0);
  size_t kept = 0;  // lists compacted in place: the write position never passes the read position
  for (size_t v = 0; v < n; ++v) {
    const auto begin = lists.begin() + static_cast<std::ptrdiff_t>(offsets[v]);
    const auto end = lists.begin() + static_cast<std::ptrdiff_t>(offsets[v + 1]);
    std::sort(begin, end);
    const auto last = std::unique(begin, end);
    for (auto it = begin; it != last; ++it) lists[kept++] = *it;
    g->edge_offsets[v + 1] = kept;
  }
  lists.resize(kept);
  g->neighbours = std::move(lists);
}

size_t Graph::CountSplit(Split s) const {
  return static_cast<size_t>(std::count(split.begin(), split.end(), s));
}

const char* SplitName(Split s) {
  switch (s) {
    case Split::kTrain: return "train";
    case Split::kValidation: return "val";
    case Split::kTest: return "test";
    case Split::kUnlabeled: return "unlabeled";
  }
  return "?";
}

Graph ReadPlanetoid(const std::string& content_path, const std::string& edges_path) {
  Graph g;
  ReadContent(content_path, &g);
  if (edges_path.ends_with(".edges")) {
    ReadEdgesBinary(edges_path, &g);
  } else {
    ReadCites(edges_path, &g);
  }
  return g;
}

void WriteEdgesBinary(const std::string& path, std::span<const std::pair<uint32_t, uint32_t>> edges) {
  SectionWriter w(kEdgesKind);
  w.Add("edges", edges.data(), sizeof(edges[0]), edges.size());
  w.Write(path);
}

void WriteContent(const std::string& path, const Graph& g) {
  WriteFileAtomically(path, [&](std::ostream& out) {
    std::string line;
    for (size_t v = 0; v < g.vertices; ++v) {
      line = fmt::format("{} {} {}", v, g.labels[v], SplitName(g.split[v]));
      for (uint64_t k = g.feature_offsets[v]; k < g.feature_offsets[v + 1]; ++k)
        fmt::format_to(std::back_inserter(line), " {}:{}", g.feature_ids[k], g.feature_values[k]);
      line += '\n';
      out << line;
    }
  });
}

Graph ReadGraphDir(const std::string& dir) {
  std::string content;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".content") continue;
    if (!content.empty()) throw IoError(fmt::format("{}: more than one .content file", dir));
    content = e.path().string();
  }
  if (ec) throw IoError(fmt::format("{}: cannot list: {}", dir, ec.message()));
  if (content.empty()) throw IoError(fmt::format("{}: no NAME.content file (and NAME.cites beside it)", dir));
  // A text .cites beside it, or else a binary .edges (big graphs).
  const std::string stem = content.substr(0, content.size() - std::string(".content").size());
  const std::string edges =
      fs::exists(stem + ".cites") || !fs::exists(stem + ".edges") ? stem + ".cites" : stem + ".edges";
  return ReadPlanetoid(content, edges);
}

}  // namespace parasol::apps::gnn
