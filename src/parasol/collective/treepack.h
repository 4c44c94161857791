// Tree-packing allreduce (Blink): pack weighted spanning trees over the topology's links, split
// the data across trees in proportion to their weights, and in each tree reduce towards a root
// and broadcast back, pipelined in segments. Reduce traffic runs child to parent and broadcast
// traffic parent to child, so a tree keeps both directions of its links busy.
#pragma once

#include "parasol/collective/algorithm.h"
#include "parasol/collective/spanning_tree_packing.h"

namespace parasol::collective {

// The packing treepack uses for `topology` (links between ranks; switches are not used).
TreePacking PackTopology(const Topology& topology, int max_trees = 16);

// REQUIRES: packing.nodes == p.nranks.
Program BuildTreepackAllreduce(const AllreduceParams& p, const TreePacking& packing);
// Packs p.topology (fully connected ranks when null) and builds.
Program BuildTreepackAllreduce(const AllreduceParams& p);

}  // namespace parasol::collective
