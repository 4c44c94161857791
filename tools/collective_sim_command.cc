// `parasol collective-sim`: runs an allreduce schedule on a simulated network and compares it
// with the topology's bandwidth lower bound.
#include <chrono>
#include <iostream>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "parasol/collective/algorithm.h"
#include "parasol/collective/ft_mesh.h"
#include "parasol/collective/simulator.h"
#include "parasol/collective/topology.h"
#include "parasol/collective/treepack.h"
#include "parasol/core/error.h"
#include "parasol/core/thread_pool.h"
#include "parasol/core/units.h"
#include "tools/command.h"

namespace parasol::tools {
namespace {

using collective::AllreduceAlgorithm;
using collective::Topology;

class CollectiveSim : public Command {
 public:
  explicit CollectiveSim(CLI::App& parent) {
    app_ = parent.add_subcommand("collective-sim", "Simulate an allreduce on a network topology");
    app_->add_option("--topology", topology_,
                     "full:N, ring:N, torus:RxC, mesh:RxC, hier:HxD, dgx1 or file:PATH")
        ->required();
    app_->add_option("--algo", algo_,
                     "ring, halving-doubling, torus2d, multiring, treepack, ft-mesh, auto, or all")
        ->capture_default_str();
    app_->add_option("--bytes", bytes_, "Message size (e.g. 256M)")->capture_default_str();
    app_->add_option("--failed", failed_, "Comma-separated failed node ids (torus/mesh, row-major)");
    app_->add_option("--link-gbps", link_gbps_, "Link bandwidth, GB/s per direction (0: topology default)")
        ->check(CLI::Range(0.0, 1e6));
    app_->add_option("--intra-gbps", intra_gbps_, "hier: bandwidth inside a host (0: 4x link)")
        ->check(CLI::Range(0.0, 1e6));
    app_->add_option("--latency-us", latency_us_, "Latency per hop, microseconds")
        ->check(CLI::Range(0.0, 1e6))
        ->capture_default_str();
    app_->add_option("--segment-bytes", segment_, "Pipelining segment size (0: each algorithm's default)");
    app_->add_option("--rings", rings_, "Rings for multiring")
        ->check(CLI::Range(1, 32))
        ->capture_default_str();
    app_->add_option("--torus-rows", torus_rows_, "Rows for torus2d (0: from the topology or most square)");
    app_->add_option("--elem-bytes", elem_, "Element size in bytes")
        ->check(CLI::IsMember({1, 2, 4, 8}))
        ->capture_default_str();
    app_->add_flag("--json", json_, "Print one JSON object per algorithm instead of a table");
  }

  bool NeedsMpi() const override { return false; }

  int Run(comm::MpiRuntime*) override {
    Topology::Options opts;
    opts.link_gbps = link_gbps_;
    opts.latency_us = latency_us_;
    opts.intra_gbps = intra_gbps_;
    if (!failed_.empty()) {
      for (int64_t f : ParseIntList(failed_, "--failed")) opts.failed.push_back(static_cast<int>(f));
    }
    Topology topo = Topology::Parse(topology_, opts);
    if (topo.num_ranks() < 2) {
      throw InvalidArgumentError(
          fmt::format("--topology {}: {} rank; a collective needs at least 2", topology_, topo.num_ranks()));
    }
    uint64_t bytes = ParseBytes(bytes_, "--bytes");
    if (bytes % elem_ != 0)
      throw InvalidArgumentError(
          fmt::format("--bytes: {} is not a whole number of {}-byte elements", bytes, elem_));
    std::vector<AllreduceAlgorithm> algos;
    if (algo_ == "all") {
      for (auto a : collective::AllAllreduceAlgorithms()) {
        bool grid = topo.kind() == Topology::Kind::kMesh || topo.kind() == Topology::Kind::kTorus;
        if (a == AllreduceAlgorithm::kFtMesh && !grid) continue;
        if (a == AllreduceAlgorithm::kTreepack && topo.num_ranks() > 64) continue;  // packing cost grows fast
        algos.push_back(a);
      }
    } else {
      algos.push_back(collective::ParseAllreduceAlgorithm(algo_));
    }
    double bound = collective::AllreduceBoundSeconds(topo, bytes);
    if (!json_) {
      std::cout << fmt::format("# {} ({} ranks), {} bytes, bound {:.6f} s\n", topo.name(), topo.num_ranks(),
                               bytes, bound)
                << fmt::format("# {:<17} {:>12} {:>12} {:>12} {:>10} {:>10} {:>9}\n", "algo", "time(s)",
                               "algbw(GB/s)", "busbw(GB/s)", "time/bound", "messages", "wall(s)");
    }
    for (auto a : algos) Simulate(topo, a, bytes, bound);
    return 0;
  }

 private:
  void Simulate(const Topology& topo, AllreduceAlgorithm algo, uint64_t bytes, double bound) {
    auto wall0 = std::chrono::steady_clock::now();
    const int n = topo.num_ranks();
    collective::AllreduceParams base;
    base.nranks = n;
    base.count = bytes / elem_;
    base.elem_size = elem_;
    base.segment_bytes = segment_;
    base.torus_rows = torus_rows_;
    base.rings = rings_;
    base.topology = &topo;
    if (algo == AllreduceAlgorithm::kAuto) algo = collective::ChooseAllreduce(base);
    std::optional<collective::TreePacking> packing;
    if (algo == AllreduceAlgorithm::kTreepack) packing = collective::PackTopology(topo);
    std::optional<collective::FtMeshPlan> ft_plan;
    if (algo == AllreduceAlgorithm::kFtMesh) {
      ft_plan = collective::PlanFtMesh(base);
      base.ft_mesh_plan = &*ft_plan;
    }
    std::vector<collective::Program> programs(static_cast<size_t>(n));
    ThreadPool pool;
    pool.ParallelFor(0, static_cast<size_t>(n), [&](size_t r) {
      collective::AllreduceParams p = base;
      p.rank = static_cast<int>(r);
      programs[r] =
          packing ? collective::BuildTreepackAllreduce(p, *packing) : collective::BuildAllreduce(algo, p);
    });
    auto res = collective::Simulate(topo, programs, {.elem_size = elem_});
    std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall0;
    double algbw = static_cast<double>(bytes) / res.time_s / 1e9;
    double busbw = n > 1 ? algbw * 2.0 * (n - 1) / n : 0;
    std::string name(collective::AllreduceAlgorithmName(algo));
    if (json_) {
      nlohmann::json j = {{"topology", topo.name()},
                          {"algo", name},
                          {"ranks", n},
                          {"bytes", bytes},
                          {"time_s", res.time_s},
                          {"algbw_gbps", algbw},
                          {"busbw_gbps", busbw},
                          {"bound_s", bound},
                          {"ratio", res.time_s / bound},
                          {"messages", res.messages},
                          {"max_link_busy_s", res.max_link_busy_s}};
      if (packing) j["trees"] = packing->trees.size();
      if (ft_plan) {
        j["ft_mesh_as"] = ft_plan->ring.empty() ? "lines" : "ring";
        if (ft_plan->ring.empty()) j["rows_first_share"] = ft_plan->rows_first_share;
      }
      j["channel_done_s"] = res.channel_done_s;
      std::cout << j.dump() << "\n";
    } else {
      std::cout << fmt::format("  {:<17} {:>12.6f} {:>12.3f} {:>12.3f} {:>10.3f} {:>10} {:>9.2f}\n", name,
                               res.time_s, algbw, busbw, res.time_s / bound, res.messages, wall.count());
    }
    std::cout.flush();
  }

  std::string topology_;
  std::string algo_ = "auto";
  std::string bytes_ = "256M";
  std::string failed_;
  double link_gbps_ = 0;
  double intra_gbps_ = 0;
  double latency_us_ = 1.0;
  uint64_t segment_ = 0;
  int rings_ = 2;
  int torus_rows_ = 0;
  size_t elem_ = 4;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeCollectiveSim(CLI::App& parent) {
  return std::make_unique<CollectiveSim>(parent);
}

}  // namespace parasol::tools
