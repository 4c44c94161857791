// Allreduce algorithms by name, and `auto`, which picks one by message size and topology.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "parasol/collective/schedule.h"

namespace parasol::collective {

class Topology;
struct FtMeshPlan;

enum class AllreduceAlgorithm : uint8_t {
  kAuto,
  kRing,             // reduce-scatter + allgather around a ring, pipelined in segments
  kHalvingDoubling,  // recursive halving/doubling (Rabenseifner); recursive doubling when small
  kTorus2d,          // R x C: rows reduce-scatter, columns allreduce, rows allgather
  kMultiring,        // k rings over different orderings, each with 1/k of the data
  kTreepack,         // weighted spanning trees packed over the topology
  kFtMesh,           // 2-D mesh with failed nodes, routed around the holes
};

std::string_view AllreduceAlgorithmName(AllreduceAlgorithm a);
// Throws InvalidArgumentError listing the valid names.
AllreduceAlgorithm ParseAllreduceAlgorithm(std::string_view name);
// Every concrete algorithm (not kAuto).
const std::vector<AllreduceAlgorithm>& AllAllreduceAlgorithms();

struct AllreduceParams {
  int nranks = 1;
  int rank = 0;
  uint64_t count = 0;
  size_t elem_size = 4;
  // Pipelining granularity in bytes; 0: the algorithm's default.
  uint64_t segment_bytes = 0;
  // torus2d: rows R of the R x C arrangement (C = nranks / R); 0: from a torus or mesh topology,
  // else the most square factorisation.
  int torus_rows = 0;
  // multiring: number of rings.
  int rings = 2;
  // treepack: the links to pack trees over (default: fully connected ranks). ft-mesh: the mesh
  // with its failed nodes (required). auto: chooses by it. Ranks are the topology's live nodes.
  const Topology* topology = nullptr;
  // Out of place: data starts undefined and the input holds the starting values (no copy first).
  bool from_input = false;
  // ft-mesh: a plan from PlanFtMesh for these parameters; null: an even split.
  const FtMeshPlan* ft_mesh_plan = nullptr;
};

// Resolves kAuto for these parameters. Deterministic, so every rank resolves it alike.
AllreduceAlgorithm ChooseAllreduce(const AllreduceParams& p);
// The program of rank p.rank. Throws InvalidArgumentError if the algorithm cannot run with
// these parameters (e.g. ft-mesh without a mesh).
Program BuildAllreduce(AllreduceAlgorithm a, const AllreduceParams& p);

// Default pipelining segment. Large, because on shared memory OpenMPI copies the first 32 KiB
// of every message twice (eager fragment), so small segments pay per message; measured with
// allreduce-bench (docs/benchmarks.md).
inline constexpr uint64_t kDefaultSegmentBytes = 1024 * 1024;

// Segment size in elements for `segment_bytes` (or `default_bytes` when 0), at least 1.
uint64_t SegmentElems(const AllreduceParams& p, uint64_t default_bytes);

}  // namespace parasol::collective
