#include "parasol/collective/algorithm.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "parasol/collective/ft_mesh.h"
#include "parasol/collective/halving_doubling.h"
#include "parasol/collective/multiring.h"
#include "parasol/collective/ring.h"
#include "parasol/collective/topology.h"
#include "parasol/collective/torus2d.h"
#include "parasol/collective/treepack.h"
#include "parasol/core/enum_names.h"
#include "parasol/core/error.h"

namespace parasol::collective {

namespace {

// "hd" and "rabenseifner": other names users know halving-doubling by.
constexpr EnumName<AllreduceAlgorithm> kAlgorithmNames[] = {
    {AllreduceAlgorithm::kAuto, "auto"},
    {AllreduceAlgorithm::kRing, "ring"},
    {AllreduceAlgorithm::kHalvingDoubling, "halving-doubling"},
    {AllreduceAlgorithm::kHalvingDoubling, "hd"},
    {AllreduceAlgorithm::kHalvingDoubling, "rabenseifner"},
    {AllreduceAlgorithm::kTorus2d, "torus2d"},
    {AllreduceAlgorithm::kMultiring, "multiring"},
    {AllreduceAlgorithm::kTreepack, "treepack"},
    {AllreduceAlgorithm::kFtMesh, "ft-mesh"},
};

// Crossovers on a flat network, measured with `parasol allreduce-bench` (docs/benchmarks.md):
// below 64 KiB halving-doubling's log2(p) steps win; with a power-of-two rank count it needs no
// fold and matches or beats the ring up to several MiB (fewer steps, the same bytes); beyond,
// the ring's pipelining wins. Only values every rank shares may decide (never local core counts).
constexpr uint64_t kRingMinBytes = 64 * 1024;
constexpr uint64_t kPowerOfTwoRingMinBytes = 8 * 1024 * 1024;

}  // namespace

std::string_view AllreduceAlgorithmName(AllreduceAlgorithm a) { return NameOf(kAlgorithmNames, a); }

AllreduceAlgorithm ParseAllreduceAlgorithm(std::string_view name) {
  return ParseName(kAlgorithmNames, name, "allreduce algorithm");
}

const std::vector<AllreduceAlgorithm>& AllAllreduceAlgorithms() {
  static const std::vector<AllreduceAlgorithm> kAll = {
      AllreduceAlgorithm::kRing,      AllreduceAlgorithm::kHalvingDoubling, AllreduceAlgorithm::kTorus2d,
      AllreduceAlgorithm::kMultiring, AllreduceAlgorithm::kTreepack,        AllreduceAlgorithm::kFtMesh};
  return kAll;
}

uint64_t SegmentElems(const AllreduceParams& p, uint64_t default_bytes) {
  uint64_t bytes = p.segment_bytes ? p.segment_bytes : default_bytes;
  return std::max<uint64_t>(1, bytes / p.elem_size);
}

AllreduceAlgorithm ChooseAllreduce(const AllreduceParams& p) {
  if (p.topology) {
    switch (p.topology->kind()) {
      case Topology::Kind::kTorus: return AllreduceAlgorithm::kTorus2d;
      case Topology::Kind::kMesh: return AllreduceAlgorithm::kFtMesh;
      case Topology::Kind::kDgx1:
      case Topology::Kind::kCustom: return AllreduceAlgorithm::kTreepack;
      case Topology::Kind::kHier: return AllreduceAlgorithm::kMultiring;
      case Topology::Kind::kFull:
      case Topology::Kind::kRing: break;
    }
  }
  uint64_t bytes = p.count * p.elem_size;
  bool power_of_two = (p.nranks & (p.nranks - 1)) == 0;
  if (bytes < kRingMinBytes || (power_of_two && bytes < kPowerOfTwoRingMinBytes)) {
    return AllreduceAlgorithm::kHalvingDoubling;
  }
  return AllreduceAlgorithm::kRing;
}

Program BuildAllreduce(AllreduceAlgorithm a, const AllreduceParams& p) {
  if (p.nranks < 1 || p.rank < 0 || p.rank >= p.nranks) {
    throw InvalidArgumentError(fmt::format("allreduce: rank {} of {}", p.rank, p.nranks));
  }
  switch (a) {
    case AllreduceAlgorithm::kAuto: return BuildAllreduce(ChooseAllreduce(p), p);
    case AllreduceAlgorithm::kRing: return BuildRingAllreduce(p);
    case AllreduceAlgorithm::kHalvingDoubling: return BuildHalvingDoublingAllreduce(p);
    case AllreduceAlgorithm::kTorus2d: return BuildTorus2dAllreduce(p);
    case AllreduceAlgorithm::kMultiring: return BuildMultiringAllreduce(p);
    case AllreduceAlgorithm::kTreepack: return BuildTreepackAllreduce(p);
    case AllreduceAlgorithm::kFtMesh: return BuildFtMeshAllreduce(p);
  }
  throw InvalidArgumentError("allreduce: unknown algorithm");
}

}  // namespace parasol::collective
