// A ring through every live node of a mesh with failed nodes, for a bidirectional ring allreduce
// that loses no bandwidth to the holes.
//
// Cut the mesh into 2x2 blocks. Each whole block is a ring of four; two neighbouring rings merge
// into one by trading their facing sides for the two links between them, so the merges along a
// spanning tree of the blocks give one ring through every node (the classic construction of a
// Hamiltonian cycle on a grid). A block with one failed node keeps a path of three live nodes
// that joins the rings of two blocks beside it; the two rings' other ends, diagonal to each
// other, are joined by a message the network routes through the corner node between them over
// two links no other step of the ring uses. A block with two failed nodes on one side hangs its
// other two nodes into the ring of the block beyond them. Holed blocks that touch, or that
// cannot join so, are searched for as a region (region_ring.h) that then merges like a block.
// So every link carries at most one message stream each way, as on a mesh without holes, and a
// hole costs the ring only the extra hop of latency of its routed pair.
//
// Some hole sets have no such ring at all: with holes at (1,2) and (1,4), node (0,3) would need
// three ring neighbours, since (0,2), (0,4) and (1,3) have only two links each and one of them
// leads to (0,3). ft-mesh then runs as lines.
#pragma once

#include <optional>
#include <vector>

#include "parasol/collective/topology.h"

namespace parasol::collective {

// The live ranks of a mesh (or torus) in ring order, such that the routes from each rank to the
// next and back, over all of the ring, use no directed link twice. nullopt where this
// construction finds none: a side of odd length, holes with no ring around them (above), or a
// region search that ran out of steps.
std::optional<std::vector<int>> MeshCycle(const Topology& t);

}  // namespace parasol::collective
