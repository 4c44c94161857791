// `parasol cluster-sim`: replays a workload of deep-learning jobs against measured profiles under
// a scheduling policy; prints average, p99 and maximum job completion time and the makespan.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/sched/goodput_policy.h"
#include "parasol/sched/optimus.h"
#include "parasol/sched/simulator.h"
#include "parasol/sched/tiresias.h"
#include "tools/command.h"

namespace parasol::tools {
namespace {

class ClusterSimCommand : public Command {
 public:
  explicit ClusterSimCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("cluster-sim", "Simulate a GPU cluster scheduler on a workload trace");
    app_->add_option("--workload", workload_, "CSV: name,time,application,num_replicas,batch_size")
        ->required();
    app_->add_option("--profiles", profiles_,
                     "Folder of application profiles (default: ../shared/data/pollux/profiles from here, "
                     "else beside the source tree)");
    app_->add_option("--policy", policy_, "goodput, tiresias or optimus")->capture_default_str();
    app_->add_option("--interval", o_.interval_s, "Scheduling interval (s)")->capture_default_str();
    app_->add_option("--nodes", o_.cluster.nodes, "Nodes")->capture_default_str();
    app_->add_option("--gpus-per-node", o_.cluster.gpus_per_node, "GPUs per node")->capture_default_str();
    app_->add_option("--restart-penalty", o_.restart_penalty_s,
                     "Seconds a job loses when its allocation changes")
        ->capture_default_str();
    app_->add_option("--service-scale", service_scale_gpu_s_,
                     "goodput: weight by attained service instead (GPU-seconds that halve it; 0: off)")
        ->capture_default_str();
    app_->add_option("--remaining-scale", remaining_scale_s_,
                     "goodput: weight jobs by remaining work (1-GPU seconds that halve it; 0: off)")
        ->capture_default_str();
    app_->add_option("--horizon", horizon_s_,
                     "goodput: seconds a new allocation is assumed to hold (restart cost)")
        ->capture_default_str();
    app_->add_option("--search", search_,
                     "goodput: GPU counts by 'greedy' (marginal gain) or 'exact' (knapsack)")
        ->capture_default_str();
    app_->add_option("--csv", csv_, "Write name,application,submit_time,completion_time,jct,restarts");
  }

  bool NeedsMpi() const override { return false; }

  int Run(comm::MpiRuntime*) override {
    if (o_.interval_s <= 0 || o_.cluster.nodes <= 0 || o_.cluster.gpus_per_node <= 0 ||
        o_.restart_penalty_s < 0) {
      throw InvalidArgumentError(
          "--interval, --nodes and --gpus-per-node must be positive, --restart-penalty >= 0");
    }
    std::unique_ptr<sched::Policy> policy;
    if (policy_ == "tiresias") {
      policy = std::make_unique<sched::TiresiasPolicy>();
    } else if (policy_ == "optimus") {
      policy = std::make_unique<sched::OptimusPolicy>();
    } else if (policy_ == "goodput") {
      if (search_ != "greedy" && search_ != "exact")
        throw InvalidArgumentError(fmt::format("--search '{}': greedy or exact", search_));
      policy = std::make_unique<sched::GoodputPolicy>(
          sched::GoodputPolicyOptions{.restart_penalty_s = o_.restart_penalty_s,
                                      .horizon_s = horizon_s_,
                                      .remaining_scale_s = remaining_scale_s_,
                                      .service_scale_gpu_s = service_scale_gpu_s_,
                                      .exact_search = search_ == "exact"});
      o_.adaptive_batch = true;
    } else {
      throw InvalidArgumentError(fmt::format("--policy '{}': goodput, tiresias or optimus", policy_));
    }
    auto workload = sched::ReadWorkload(workload_);
    sched::ApplicationSet apps(ProfilesFolder());
    const int capacity = o_.cluster.nodes * o_.cluster.gpus_per_node;
    for (const auto& j : workload) {
      if (j.replicas > capacity) {
        throw InvalidArgumentError(fmt::format("{}: job {} asks for {} GPUs, the cluster has {}", workload_,
                                               j.name, j.replicas, capacity));
      }
    }
    sched::SimResult r = sched::SimulateCluster(workload, apps, *policy, o_);
    std::cout << fmt::format("# {}, policy {}, {} x {}, interval {} s, restart penalty {} s\n",
                             Count(r.jobs.size(), "job"), policy->name(), Count(o_.cluster.nodes, "node"),
                             Count(o_.cluster.gpus_per_node, "GPU"), o_.interval_s, o_.restart_penalty_s)
              << fmt::format("average JCT {:.0f} s, p99 {:.0f} s, max {:.0f} s, makespan {:.0f} s\n",
                             r.average_jct, r.p99_jct, r.max_jct, r.makespan)
              << fmt::format(
                     "GPUs held {:.0f}% of the makespan ({:.1f}% of that restarting); jobs waited {:.0f} s "
                     "each on average\n",
                     100 * r.allocated_gpu_s / (r.makespan * o_.cluster.nodes * o_.cluster.gpus_per_node),
                     100 * r.restart_gpu_s / std::max(1.0, r.allocated_gpu_s),
                     r.waiting_job_s / static_cast<double>(r.jobs.size()))
              << fmt::format("simulated in {:.2f} s ({:.2f} s in the policy)\n", r.run_seconds,
                             r.scheduling_seconds);
    if (!csv_.empty()) {
      CsvWriter csv(csv_, {"name", "application", "submit_time", "completion_time", "jct", "restarts"});
      for (const auto& j : r.jobs) {
        csv.Row({j.name, j.application, fmt::format("{:.0f}", j.submit_time),
                 fmt::format("{:.0f}", j.completion_time), fmt::format("{:.0f}", j.jct()),
                 std::to_string(j.restarts)});
      }
      csv.Commit();
    }
    return 0;
  }

 private:
  // The default is found from the working folder (the repository root, as the README runs it) or
  // else from the source tree this binary was built from, so a run elsewhere still finds it.
  std::string ProfilesFolder() const {
    namespace fs = std::filesystem;
    if (!profiles_.empty()) {
      if (!fs::is_directory(profiles_))
        throw InvalidArgumentError(fmt::format("--profiles {}: no such folder", profiles_));
      return profiles_;
    }
    const std::string rel = "../shared/data/pollux/profiles";
    const std::string beside_source = std::string(PARASOL_SOURCE_DIR) + "/" + rel;
    for (const std::string& dir : {rel, beside_source}) {
      if (fs::is_directory(dir)) return dir;
    }
    throw InvalidArgumentError(fmt::format("no profiles folder at {} (from {}) or {}: give --profiles DIR",
                                           rel, fs::current_path().string(), beside_source));
  }

  std::string workload_, csv_;
  std::string profiles_;
  std::string policy_ = "goodput";
  std::string search_ = "greedy";
  sched::SimOptions o_;
  double service_scale_gpu_s_ = 0;
  double horizon_s_ = 300;
  double remaining_scale_s_ = 36000;
};

}  // namespace

std::unique_ptr<Command> MakeClusterSim(CLI::App& parent) {
  return std::make_unique<ClusterSimCommand>(parent);
}

}  // namespace parasol::tools
