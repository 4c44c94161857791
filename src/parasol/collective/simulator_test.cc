// The simulator against closed forms, and every algorithm's schedule carried with real data at
// scales no test machine runs (up to 256 ranks on meshes with holes).
#include "parasol/collective/simulator.h"

#include <cmath>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/collective/algorithm.h"
#include "parasol/collective/ft_mesh.h"
#include "parasol/collective/mesh_cycle.h"
#include "parasol/collective/rooted.h"
#include "parasol/collective/test_util.h"
#include "parasol/core/error.h"

namespace parasol::collective {
namespace {

// `ft_mesh`: the plan ft-mesh runs (default: lines, an even split).
std::vector<Program> Programs(AllreduceAlgorithm algo, const Topology& t, uint64_t count, size_t elem,
                              uint64_t segment_bytes = 0, int rings = 2, bool from_input = false,
                              const FtMeshPlan* ft_mesh = nullptr) {
  std::vector<Program> out;
  for (int r = 0; r < t.num_ranks(); ++r) {
    AllreduceParams p;
    p.nranks = t.num_ranks();
    p.rank = r;
    p.count = count;
    p.elem_size = elem;
    p.segment_bytes = segment_bytes;
    p.topology = &t;
    p.rings = rings;
    p.from_input = from_input;
    out.push_back(ft_mesh ? BuildFtMeshAllreduce(p, *ft_mesh) : BuildAllreduce(algo, p));
  }
  return out;
}

// Simulated seconds of ft-mesh with `plan` for `count` floats.
double FtMeshSeconds(const Topology& t, uint64_t count, const FtMeshPlan& plan) {
  return Simulate(t, Programs(AllreduceAlgorithm::kFtMesh, t, count, 4, 0, 2, false, &plan), {.elem_size = 4})
      .time_s;
}

TEST(Simulator, RingMatchesClosedForm) {
  const double alpha = 1e-6, bw = 25e9;
  for (int n : {2, 3, 4, 8, 16}) {
    Topology t = Topology::Parse(fmt::format("ring:{}", n), {.link_gbps = 25, .latency_us = 1});
    const uint64_t count = uint64_t{16} << 20;  // float32: 64 MiB
    double bytes = static_cast<double>(count) * 4;
    // One message per step: segments as large as a chunk.
    auto res =
        Simulate(t, Programs(AllreduceAlgorithm::kRing, t, count, 4, uint64_t{1} << 40), {.elem_size = 4});
    double want = 2.0 * (n - 1) / n * bytes / bw + 2.0 * (n - 1) * alpha;
    EXPECT_NEAR(res.time_s / want, 1.0, 1e-6) << n << " ranks: " << res.time_s << " vs " << want;
    EXPECT_EQ(res.messages, static_cast<uint64_t>(2 * n * (n - 1)));
  }
}

TEST(Simulator, HalvingDoublingMatchesClosedFormOnFullNetwork) {
  const double alpha = 2e-6, bw = 10e9;
  for (int n : {2, 4, 8, 32}) {
    Topology t = Topology::Parse(fmt::format("full:{}", n), {.link_gbps = 10, .latency_us = 2});
    const uint64_t count = uint64_t{1} << 22;
    double bytes = static_cast<double>(count) * 8;
    auto res = Simulate(t, Programs(AllreduceAlgorithm::kHalvingDoubling, t, count, 8, uint64_t{1} << 40),
                        {.elem_size = 8});
    double want = 2 * std::log2(n) * alpha + 2.0 * (n - 1) / n * bytes / bw;
    EXPECT_NEAR(res.time_s / want, 1.0, 1e-6) << n;
  }
}

TEST(Simulator, MessagesSharingALinkTakeTurns) {
  // 0 - 1 - 2 in a line; 0 and 1 both send S to 2, so link 1->2 carries 2S.
  Topology t = Topology::Parse("mesh:1x3", {.link_gbps = 1, .latency_us = 0});
  const uint64_t count = 1000000;
  std::vector<Program> programs;
  for (int r = 0; r < 3; ++r) {
    ProgramBuilder b(r, 3);
    Region all{BufferId::kData, 0, count};
    if (r < 2)
      b.Send(2, all, r);
    else {
      b.Recv(0, all, 0);
      b.Recv(1, Region{BufferId::kData, 0, count}, 1);
    }
    programs.push_back(std::move(b).Finish());
  }
  auto res = Simulate(t, programs, {.elem_size = 1});
  EXPECT_NEAR(res.time_s, 2 * count / 1e9, 1e-12);
  EXPECT_NEAR(res.max_link_busy_s, 2 * count / 1e9, 1e-12);
}

TEST(Simulator, StuckScheduleIsReportedNotHung) {
  Topology t = Topology::Parse("full:2");
  std::vector<Program> programs;
  for (int r = 0; r < 2; ++r) {
    ProgramBuilder b(r, 2);
    b.Recv(1 - r, Region{BufferId::kData, 0, 4});  // both receive, nobody sends
    programs.push_back(std::move(b).Finish());
  }
  try {
    Simulate(t, programs, {.elem_size = 4});
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("simulation stuck: rank 0 completed 0 of 1 steps"));
  }
}

TEST(Simulator, BoundForTorusUsesAllFourLinks) {
  Topology t = Topology::Parse("torus:32x32", {.link_gbps = 50, .latency_us = 1});
  uint64_t bytes = uint64_t{256} << 20;
  double n = 1024;
  double want = 2 * (n - 1) / n * static_cast<double>(bytes) / (4 * 50e9) + 32 * 1e-6;  // diameter 16+16
  EXPECT_NEAR(AllreduceBoundSeconds(t, bytes), want, 1e-12);
}

// A host's 4 devices share one 10 GB/s uplink: the whole result (256 MiB) must come in through
// it, far slower than each device's own 4 x 40 GB/s of links.
TEST(Simulator, BoundForHostsCountsTheUplink) {
  Topology t = Topology::Parse("hier:2x4", {.link_gbps = 10, .latency_us = 1});
  uint64_t bytes = uint64_t{256} << 20;
  double want = static_cast<double>(bytes) / 10e9 + 4 * 1e-6;  // device, NIC, core, NIC, device
  EXPECT_NEAR(AllreduceBoundSeconds(t, bytes), want, 1e-12);
}

struct ScaleCase {
  AllreduceAlgorithm algo;
  std::string topology;
  std::vector<int> failed;
  uint64_t count;
  bool ft_mesh_ring = false;  // ft-mesh as a ring through the live nodes (else as lines)
  bool in_place_too = true;   // false: out of place only (the stricter run), for the largest cases
};

// Carries real data through the whole schedule and checks every rank's result, in place and out
// of place (data starts as garbage; every value must come from the input or a peer).
void CheckCarriesData(const ScaleCase& c) {
  Topology t = Topology::Parse(c.topology, {.failed = c.failed});
  const int n = t.num_ranks();
  std::vector<std::vector<std::byte>> inputs;
  for (int r = 0; r < n; ++r)
    inputs.push_back(testing::ExactInput(DType::kFloat32, ReduceOp::kSum, r, c.count));
  auto want = testing::Reference(DType::kFloat32, ReduceOp::kSum, inputs);
  for (bool from_input : {false, true}) {
    if (!from_input && !c.in_place_too) continue;
    std::vector<std::vector<std::byte>> data = inputs;
    if (from_input) {
      for (auto& d : data) std::fill(d.begin(), d.end(), std::byte{0xff});
    }
    SimulationData sd{&data, &inputs, GetReduceFn(DType::kFloat32, ReduceOp::kSum),
                      GetReduceFn3(DType::kFloat32, ReduceOp::kSum)};
    std::optional<FtMeshPlan> ring;
    if (c.ft_mesh_ring) ring = FtMeshPlan{0.5, MeshCycle(t).value()};
    Simulate(t, Programs(c.algo, t, c.count, 4, 512, 2, from_input, ring ? &*ring : nullptr),
             {.elem_size = 4}, &sd);
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(data[static_cast<size_t>(r)], want)
          << AllreduceAlgorithmName(c.algo) << " on " << c.topology << ": rank " << r
          << (from_input ? " (out of place)" : "");
    }
  }
}

TEST(Simulator, SchedulesAreCorrectAtScale) {
  const ScaleCase cases[] = {
      {AllreduceAlgorithm::kRing, "ring:24", {}, 3001},
      {AllreduceAlgorithm::kHalvingDoubling, "full:29", {}, 3001},
      {AllreduceAlgorithm::kHalvingDoubling, "full:64", {}, 50},
      {AllreduceAlgorithm::kTorus2d, "torus:8x8", {}, 4001},
      {AllreduceAlgorithm::kTorus2d, "torus:4x6", {}, 97},
      {AllreduceAlgorithm::kMultiring, "full:12", {}, 3001},
      {AllreduceAlgorithm::kTreepack, "dgx1", {}, 3001},
      {AllreduceAlgorithm::kTreepack, "hier:2x4", {}, 3001},
      {AllreduceAlgorithm::kMultiring, "hier:4x4", {}, 3001},
      {AllreduceAlgorithm::kFtMesh, "mesh:16x16", {}, 4001},
  };
  for (const auto& c : cases) CheckCarriesData(c);
}

// ft-mesh with one hole, holes on the edge and in a corner, a row of holes, a whole failed edge
// row, and clusters, on a 16x16 mesh.
TEST(Simulator, FtMeshRoutesAroundHoles) {
  const std::vector<std::vector<int>> failures = {
      {5 * 16 + 7},                                                  // one interior hole
      {0, 15, 255},                                                  // corners
      {3, 16 * 7, 16 * 9 + 15},                                      // on each edge
      {6 * 16 + 4, 6 * 16 + 5, 6 * 16 + 6, 6 * 16 + 7, 6 * 16 + 8},  // part of a row
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},        // the whole first row
      {17, 18, 33, 34},                                              // a 2x2 cluster
  };
  for (const auto& f : failures) CheckCarriesData({AllreduceAlgorithm::kFtMesh, "mesh:16x16", f, 2003});
}

// The ring through the live nodes, with holes on the edge, in the corners, in neighbouring lines
// and in blocks that touch.
TEST(Simulator, FtMeshRingCarriesDataAroundHoles) {
  const std::vector<std::vector<int>> failures = {
      {0, 15, 240, 255},           // corners
      {5, 50, 230},                // edges
      {103, 150, 205, 221},        // neighbouring lines, two holes on one block's side
      {13 * 16 + 9, 14 * 16 + 7},  // blocks that touch at a corner
  };
  for (const auto& f : failures) CheckCarriesData({AllreduceAlgorithm::kFtMesh, "mesh:16x16", f, 2003, true});
}

TEST(Simulator, FtMeshRingCarriesDataAt1020Ranks) {
  CheckCarriesData({.algo = AllreduceAlgorithm::kFtMesh,
                    .topology = "mesh:32x32",
                    .failed = {17, 16 * 32 + 31, 18 * 32 + 30, 31 * 32},
                    .count = 4093,
                    .ft_mesh_ring = true,
                    .in_place_too = false});
}

// Lines lose 1.5x or more to holes on the edge or in neighbouring lines (each detour crosses a
// link the perpendicular lines fill); the planner takes the ring there, which loses nothing but
// a hop of latency per routed pair.
TEST(Simulator, FtMeshPlanTakesTheRingWhereLinesLose) {
  const uint64_t count = uint64_t{16} << 20;  // float32: 64 MiB
  auto planned = [&](const Topology& t) {
    AllreduceParams p;
    p.nranks = t.num_ranks();
    p.count = count;
    p.topology = &t;
    return PlanFtMesh(p);
  };
  Topology whole = Topology::Parse("mesh:16x16");
  const double base = FtMeshSeconds(whole, count, planned(whole));
  for (const std::vector<int>& failed :
       {std::vector<int>{5, 50, 230}, std::vector<int>{103, 150, 205, 221}}) {
    Topology t = Topology::Parse("mesh:16x16", {.failed = failed});
    FtMeshPlan plan = planned(t);
    EXPECT_FALSE(plan.ring.empty()) << failed[0];
    EXPECT_LT(FtMeshSeconds(t, count, plan), 1.25 * base) << failed[0];
    EXPECT_GT(FtMeshSeconds(t, count, FtMeshPlan{}), 1.4 * base) << failed[0];
  }
}

// Holes in neighbouring columns (3 and 4) cannot both fold, so the columns-first half detours
// and runs slower; the planner moves data to the rows-first half and beats the even split. (A
// side of odd length: no ring through the mesh, so lines it is.)
TEST(Simulator, FtMeshPlanBalancesTheHalves) {
  Topology t = Topology::Parse("mesh:8x7", {.failed = {2 * 7 + 3, 5 * 7 + 4}});
  AllreduceParams p;
  p.nranks = t.num_ranks();
  p.count = uint64_t{8} << 20;
  p.elem_size = 4;
  p.topology = &t;
  FtMeshPlan plan = PlanFtMesh(p);
  EXPECT_GT(plan.rows_first_share, 0.5);
  EXPECT_LT(FtMeshSeconds(t, p.count, plan), 0.99 * FtMeshSeconds(t, p.count, FtMeshPlan{}));
}

TEST(Simulator, BroadcastAndReduceChainsStream) {
  // A pipelined chain over a ring: time ~ S/B + (n-2) segments, far below log2(n) S/B.
  Topology t = Topology::Parse("ring:8", {.link_gbps = 10, .latency_us = 0});
  const uint64_t count = uint64_t{1} << 24;
  std::vector<Program> programs;
  for (int r = 0; r < 8; ++r) {
    programs.push_back(BuildBroadcast({8, r, 0, count, 1, 1 << 16}));
  }
  auto res = Simulate(t, programs, {.elem_size = 1});
  double want = (count + 6.0 * (1 << 16)) / 10e9;
  EXPECT_NEAR(res.time_s / want, 1.0, 1e-6);
}

}  // namespace
}  // namespace parasol::collective
