// A batch of example graphs laid out for batched execution (Cavs's scheduling): every vertex of
// every graph has a row of one state buffer (graph after graph, plus a last row of zeros that
// stands for an absent child), and the vertices are cut into levels, each holding the vertices
// whose children all lie in earlier levels: a level's vertex function runs once, over all its
// vertices of all graphs at once. Per node: one vertex per level (the unbatched baseline).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <torch/torch.h>

#include "parasol/dl/dynamic/example_graph.h"

namespace parasol::dl::dynamic {

enum class Batching { kBatched, kPerNode };

struct Level {
  torch::Tensor rows;      // int64 [n]: the level's vertices
  torch::Tensor children;  // int64 [n x arity]: their children's rows (absent: the zero row)
  bool leaves = true;      // no vertex of the level has a child
  // The level's vertices that read an input: their positions in the level and their places in
  // the schedule's input list.
  torch::Tensor input_positions, input_indices;
};

struct Schedule {
  int arity = 2;
  int64_t vertices = 0;  // rows 0 .. vertices-1; row `vertices` is the zero state
  std::vector<Level> levels;
  torch::Tensor input_rows;    // int64: the rows that read an input
  torch::Tensor input_tokens;  // int64: their inputs' token ids
  torch::Tensor labels;        // int64 [vertices]: -1 where none
  torch::Tensor roots;         // int64 [graphs]: each graph's root row
};

// REQUIRES: the graphs pass CheckExampleGraph and share one arity (InvalidArgumentError).
Schedule MakeSchedule(std::span<const ExampleGraph* const> graphs, Batching batching);

}  // namespace parasol::dl::dynamic
