#include "parasol/dl/dynamic/example_graph.h"

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::dl::dynamic {

void CheckExampleGraph(const ExampleGraph& g) {
  const size_t n = g.size();
  if (g.label.size() != n || g.children.size() != n * static_cast<size_t>(g.arity)) {
    throw InvalidArgumentError(
        fmt::format("example graph: {} inputs, {} labels and {} child slots for arity {}", n, g.label.size(),
                    g.children.size(), g.arity));
  }
  for (size_t v = 0; v < n; ++v) {
    for (int k = 0; k < g.arity; ++k) {
      const int32_t c = g.children[v * static_cast<size_t>(g.arity) + static_cast<size_t>(k)];
      if (c < -1 || c >= static_cast<int32_t>(v)) {
        throw InvalidArgumentError(fmt::format(
            "example graph: vertex {}'s child {} is {}: children come before their parent", v, k, c));
      }
    }
  }
}

}  // namespace parasol::dl::dynamic
