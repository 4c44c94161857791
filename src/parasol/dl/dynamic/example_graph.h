// One example of a dynamic network: its own graph (a tree, a chain, a DAG) as plain arrays, the
// input each vertex reads and the label each vertex is trained on. Vertices are numbered children
// first: every child's index is below its parent's, so the order is already a topological one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace parasol::dl::dynamic {

struct ExampleGraph {
  int arity = 2;                  // children per vertex at most
  std::vector<int32_t> children;  // size() x arity; -1: no child there
  std::vector<int32_t> input;     // per vertex: a token id, or -1 for none
  std::vector<int32_t> label;     // per vertex: a class, or -1 for none
  int32_t root = -1;              // the vertex whose label is the example's (the last, for trees)

  size_t size() const { return input.size(); }
};

// InvalidArgumentError naming the vertex when a child index is not below its parent's (or out of
// range), or the arrays' sizes disagree.
void CheckExampleGraph(const ExampleGraph& g);

}  // namespace parasol::dl::dynamic
