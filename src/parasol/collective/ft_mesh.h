// Fault-tolerant allreduce on a 2-D mesh with failed nodes (holes), after the TPU work on highly
// available data-parallel training on meshes.
//
// A mesh row is a line, not a ring, so each row reduce-scatters as a line: the contributions to
// chunk k flow from both ends of the row towards chunk k's owner, using both directions of every
// link. Then each chunk is allreduced along its column (again as a line), and the row allgathers
// it back. Half the data goes rows-first and half columns-first so x and y links work at once.
//
// Holes: a chunk whose home node (row r, column k) has failed is owned by the nearest live node of
// the row, which stands in for it in column k; consecutive live nodes of a line that a hole
// separates exchange messages over a detour the network routes around the hole. Live ranks are
// the mesh's live nodes in row-major order.
//
// Lines detour cheaply around holes inside the mesh but not around holes on its edge or in
// neighbouring lines (every detour there crosses a link the perpendicular lines already fill).
// So ft-mesh can also run as a bidirectional ring through every live node (mesh_cycle.h), whose
// links carry one stream each way whatever the holes; the planner picks by simulation.
#pragma once

#include <vector>

#include "parasol/collective/algorithm.h"
#include "parasol/collective/schedule.h"

namespace parasol::collective {

// Line phases over `line` (ranks in line order). Chunk k is chunks[k]; owner[k] is the position
// in `line` that ends up holding it (reduce-scatter) or starts with it (allgather).
// Farthest-first (the default) keeps link i of a line busy from the start of the phase for the
// chunks that cross it; nearest-first keeps the same links busy towards its end instead, so a
// line whose traffic detours over a neighbour's links can use the time they are idle.
void LineReduceScatter(ProgramBuilder& b, const std::vector<int>& line, const std::vector<Region>& chunks,
                       const std::vector<int>& owner, int channel, uint64_t seg_elems,
                       bool nearest_first = false);
void LineAllgather(ProgramBuilder& b, const std::vector<int>& line, const std::vector<Region>& chunks,
                   const std::vector<int>& owner, int channel, uint64_t seg_elems);

// How ft-mesh runs: either as lines, dividing the data between the rows-first and
// columns-first halves (holes can slow one orientation more than the other), or as a
// bidirectional ring through every live node (mesh_cycle.h), which loses no bandwidth to holes
// on the mesh's edge or in neighbouring lines. The planner simulates the candidates on the
// topology and keeps the fastest (deterministic: every rank agrees).
struct FtMeshPlan {
  double rows_first_share = 0.5;
  std::vector<int> ring;  // ranks in ring order; empty: lines
};
FtMeshPlan PlanFtMesh(const AllreduceParams& p);

// REQUIRES: p.topology is a mesh (failed nodes allowed) or torus with p.nranks live nodes.
Program BuildFtMeshAllreduce(const AllreduceParams& p, const FtMeshPlan& plan);
// Uses p.ft_mesh_plan, or an even split without one. Planning simulates every rank's program, so
// callers plan once (the collectives API caches a plan per context; collective-sim plans once).
Program BuildFtMeshAllreduce(const AllreduceParams& p);

}  // namespace parasol::collective
