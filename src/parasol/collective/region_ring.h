// Depth-first search for a ring through every live node of a rectangle of a mesh with failed
// nodes, for mesh_cycle where holes lie close together.
//
// The ring's steps are the links between live nodes and, beside a failed node, the diagonal
// pairs whose other common neighbour is live: the network routes such a pair through it (the
// only two-hop route), so the step costs two links. No link may carry two steps, so every link
// carries at most one stream each way in a bidirectional ring. The search tries links before
// routed pairs and, among them, the node with the fewest ways on first (Warnsdorff's rule);
// after each step every node off the path must keep two free ways and stay reachable from the
// path's head, and the head must still be able to come back to the start.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "parasol/collective/topology.h"

namespace parasol::collective {

// Rows [r0, r1) and columns [c0, c1) of a mesh.
struct NodeRect {
  int r0, r1, c0, c1;
};

// The ring's edges as node pairs (mesh node ids, a routed pair as one edge), in ring order; or
// nullopt when there is none or the search took more than `budget` steps. Every route stays
// inside the rectangle.
std::optional<std::vector<std::pair<int, int>>> FindRegionRing(const Topology& t, const NodeRect& rect,
                                                               long budget);

}  // namespace parasol::collective
