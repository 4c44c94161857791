#include "parasol/dl/dynamic/schedule.h"

#include <algorithm>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::dl::dynamic {
namespace {

torch::Tensor Longs(const std::vector<int64_t>& v) { return torch::tensor(v, torch::kLong); }

}  // namespace

Schedule MakeSchedule(std::span<const ExampleGraph* const> graphs, Batching batching) {
  Schedule s;
  if (graphs.empty()) throw InvalidArgumentError("an empty batch of graphs");
  s.arity = graphs.front()->arity;
  std::vector<int64_t> first;  // each graph's first row
  for (const ExampleGraph* g : graphs) {
    if (g->arity != s.arity) throw InvalidArgumentError("graphs of one batch must share an arity");
    first.push_back(s.vertices);
    s.vertices += static_cast<int64_t>(g->size());
  }
  // Height: 0 for a vertex without children, else one more than its highest child. Children come
  // first in each graph, so one pass in order computes it.
  std::vector<int32_t> level_of(static_cast<size_t>(s.vertices));
  std::vector<int64_t> labels, roots, input_rows, input_tokens,
      input_index(static_cast<size_t>(s.vertices), -1);
  int32_t levels = 0;
  for (size_t gi = 0; gi < graphs.size(); ++gi) {
    const ExampleGraph& g = *graphs[gi];
    for (size_t v = 0; v < g.size(); ++v) {
      const int64_t row = first[gi] + static_cast<int64_t>(v);
      int32_t height = 0;
      for (int k = 0; k < g.arity; ++k) {
        const int32_t c = g.children[v * static_cast<size_t>(g.arity) + static_cast<size_t>(k)];
        if (c >= 0) height = std::max(height, level_of[static_cast<size_t>(first[gi] + c)] + 1);
      }
      level_of[static_cast<size_t>(row)] =
          batching == Batching::kBatched ? height : static_cast<int32_t>(row);
      levels = std::max(levels, level_of[static_cast<size_t>(row)] + 1);
      labels.push_back(g.label[v]);
      if (g.input[v] >= 0) {
        input_index[static_cast<size_t>(row)] = static_cast<int64_t>(input_rows.size());
        input_rows.push_back(row);
        input_tokens.push_back(g.input[v]);
      }
    }
    roots.push_back(first[gi] + g.root);
  }
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(levels)), children(static_cast<size_t>(levels));
  std::vector<std::vector<int64_t>> positions(static_cast<size_t>(levels)),
      indices(static_cast<size_t>(levels));
  std::vector<char> leaves(static_cast<size_t>(levels), 1);
  for (size_t gi = 0; gi < graphs.size(); ++gi) {
    const ExampleGraph& g = *graphs[gi];
    for (size_t v = 0; v < g.size(); ++v) {
      const int64_t row = first[gi] + static_cast<int64_t>(v);
      const auto l = static_cast<size_t>(level_of[static_cast<size_t>(row)]);
      if (input_index[static_cast<size_t>(row)] >= 0) {
        positions[l].push_back(static_cast<int64_t>(rows[l].size()));
        indices[l].push_back(input_index[static_cast<size_t>(row)]);
      }
      rows[l].push_back(row);
      for (int k = 0; k < g.arity; ++k) {
        const int32_t c = g.children[v * static_cast<size_t>(g.arity) + static_cast<size_t>(k)];
        children[l].push_back(c >= 0 ? first[gi] + c : s.vertices);
        if (c >= 0) leaves[l] = 0;
      }
    }
  }
  for (size_t l = 0; l < rows.size(); ++l) {
    if (rows[l].empty()) continue;  // per node: none is empty; batched: heights are dense
    s.levels.push_back({.rows = Longs(rows[l]),
                        .children = Longs(children[l]),
                        .leaves = leaves[l] != 0,
                        .input_positions = Longs(positions[l]),
                        .input_indices = Longs(indices[l])});
  }
  s.input_rows = Longs(input_rows);
  s.input_tokens = Longs(input_tokens);
  s.labels = Longs(labels);
  s.roots = Longs(roots);
  return s;
}

}  // namespace parasol::dl::dynamic
