// `parasol cluster`: runs real `parasol train` jobs on this machine's cores as the GPUs of a
// one-node cluster, or on the slots of the hosts of an MPI hostfile, under the goodput policy (it measures
// each job and resizes it by checkpoint and restart) or Tiresias (the users' GPU counts); prints each change
// and the completion times.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "parasol/core/csv_writer.h"
#include "parasol/core/error.h"
#include "parasol/core/plural.h"
#include "parasol/core/text_fields.h"
#include "parasol/sched/goodput_policy.h"
#include "parasol/sched/live_cluster.h"
#include "parasol/sched/tiresias.h"
#include "tools/command.h"

namespace parasol::tools {
namespace {

class ClusterCommand : public Command {
 public:
  explicit ClusterCommand(CLI::App& parent) {
    app_ = parent.add_subcommand("cluster",
                                 "Run parasol train jobs on this machine's cores as a scheduled GPU cluster");
    app_->add_option("--jobs", jobs_, "CSV: name,time,num_replicas,batch_size,steps,train_args")->required();
    CLI::Option* gpus =
        app_->add_option("--gpus", o_.gpus, "Cores used as GPUs (one rank each)")->capture_default_str();
    app_->add_option("--hosts", hosts_, "MPI hostfile (NAME slots=N per line): run the jobs on these hosts")
        ->excludes(gpus);
    app_->add_option("--stall-timeout", o_.stall_timeout_s,
                     "--hosts: seconds without a new step before a job's hosts are probed")
        ->capture_default_str();
    app_->add_option("--probe-timeout", o_.host_probe_timeout_s,
                     "--hosts: seconds a host has to start a process before it is lost")
        ->capture_default_str();
    app_->add_option("--host-retry", o_.host_retry_s,
                     "--hosts: seconds between probes of a lost host; it rejoins when it answers (0: never)")
        ->capture_default_str();
    app_->add_option("--policy", policy_, "goodput or tiresias")->capture_default_str();
    app_->add_option("--interval", o_.interval_s, "Scheduling interval (s)")->capture_default_str();
    app_->add_option("--restart-penalty", restart_penalty_s_, "goodput: seconds a resize is assumed to cost")
        ->capture_default_str();
    app_->add_option("--horizon", horizon_s_, "goodput: seconds a new allocation is assumed to hold")
        ->capture_default_str();
    app_->add_option("--remaining-scale", remaining_scale_s_,
                     "goodput: 1-GPU seconds of work left that halve a job's weight (0: off)")
        ->capture_default_str();
    app_->add_option("--work-dir", o_.launch.work_dir,
                     "Checkpoints, status files and logs, one folder per job")
        ->capture_default_str();
    app_->add_option("--mpirun", mpirun_, "Launcher for jobs on more than one GPU (-np N follows)")
        ->capture_default_str();
    app_->add_option("--stop-timeout", o_.stop_timeout_s, "Seconds a job has to checkpoint and stop")
        ->capture_default_str();
    app_->add_option("--timeout", o_.timeout_s, "Give up after this many seconds (0: never)")
        ->capture_default_str();
    app_->add_flag(
        "--fixed-batch", fixed_batch_,
        "goodput: keep every job's batch (ignore --batch-max in train_args), choosing GPU counts only");
    app_->add_option("--csv", csv_, "Write name,submit_time,completion_time,jct,restarts,restart_s,gpu_s");
  }

  bool NeedsMpi() const override { return false; }

  int Run(comm::MpiRuntime*) override {
    if (o_.gpus <= 0 || o_.interval_s <= 0 || o_.stop_timeout_s <= 0 || o_.timeout_s < 0 ||
        restart_penalty_s_ < 0 || o_.stall_timeout_s <= 0 || o_.host_probe_timeout_s <= 0 ||
        o_.host_retry_s < 0) {
      throw InvalidArgumentError(
          "--gpus, --interval, --stop-timeout, --stall-timeout and --probe-timeout must be positive, "
          "--timeout, --restart-penalty and --host-retry >= 0");
    }
    if (!hosts_.empty()) {
      o_.hosts = sched::ReadHostFile(hosts_);
      o_.gpus = static_cast<int>(o_.hosts.size()) * o_.hosts[0].slots;
    }
    std::unique_ptr<sched::Policy> policy = MakePolicy();
    auto specs = sched::ReadLiveJobs(jobs_);
    if (fixed_batch_) {
      for (sched::LiveJobSpec& s : specs) s.max_batch = 0;
    }
    o_.launch.parasol = std::filesystem::read_symlink("/proc/self/exe").string();
    o_.launch.mpirun = SplitWords(mpirun_);
    if (o_.launch.mpirun.empty()) throw InvalidArgumentError("--mpirun is empty");
    // As scripts/mpirun.sh: OpenMPI refuses root without consent; the PS backend's one-sided
    // windows need one of these components.
    if (geteuid() == 0) o_.launch.env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
    if (!std::getenv("OMPI_MCA_osc")) o_.launch.env.push_back("OMPI_MCA_osc=sm,ucx,rdma,pt2pt");
    o_.log = &std::cout;
    const std::string gpus = o_.hosts.empty() ? fmt::format("{} (cores)", Count(o_.gpus, "GPU"))
                                              : fmt::format("{} x {}", Count(o_.hosts.size(), "host"),
                                                            Count(o_.hosts[0].slots, "slot"));
    std::cout << fmt::format("# {}, policy {}, {}, interval {} s, work in {}\n", Count(specs.size(), "job"),
                             policy->name(), gpus, o_.interval_s, o_.launch.work_dir);
    sched::LiveResult r = sched::RunLive(specs, *policy, o_);
    Report(r);
    return r.failures.empty() ? 0 : 1;
  }

 private:
  std::unique_ptr<sched::Policy> MakePolicy() {
    if (policy_ == "tiresias") {
      o_.adaptive = false;
      return std::make_unique<sched::TiresiasPolicy>();
    }
    if (policy_ != "goodput")
      throw InvalidArgumentError(fmt::format("--policy '{}': goodput or tiresias", policy_));
    o_.adaptive = true;
    return std::make_unique<sched::GoodputPolicy>(
        sched::GoodputPolicyOptions{.restart_penalty_s = restart_penalty_s_,
                                    .horizon_s = horizon_s_,
                                    .min_hold_s = std::min(o_.interval_s, horizon_s_),
                                    .remaining_scale_s = remaining_scale_s_});
  }

  void Report(const sched::LiveResult& r) const {
    int restarts = 0;
    double restart_s = 0, gpu_s = 0;
    for (const auto& j : r.jobs) restarts += j.restarts, restart_s += j.restart_s, gpu_s += j.gpu_s;
    std::cout << fmt::format("average JCT {:.1f} s, max {:.1f} s, makespan {:.1f} s\n", r.average_jct,
                             r.max_jct, r.makespan)
              << fmt::format("{}, {:.1f} s stopping and starting; GPUs held {:.0f}% of the makespan\n",
                             Count(restarts, "restart"), restart_s,
                             r.makespan > 0 ? 100 * gpu_s / (r.makespan * o_.gpus) : 0.0);
    for (const std::string& h : r.lost_hosts) std::cout << "lost host " << h << "\n";
    for (const std::string& h : r.returned_hosts) std::cout << "host back " << h << "\n";
    for (const std::string& f : r.failures) std::cerr << "FAILED: " << f << "\n";
    if (csv_.empty()) return;
    CsvWriter csv(csv_, {"name", "submit_time", "completion_time", "jct", "restarts", "restart_s", "gpu_s"});
    for (const auto& j : r.jobs) {
      csv.Row({j.name, fmt::format("{:.1f}", j.submit_time), fmt::format("{:.1f}", j.completion_time),
               fmt::format("{:.1f}", j.completion_time > 0 ? j.jct() : 0.0), std::to_string(j.restarts),
               fmt::format("{:.1f}", j.restart_s), fmt::format("{:.1f}", j.gpu_s)});
    }
    csv.Commit();
  }

  std::string jobs_, csv_, hosts_;
  std::string policy_ = "goodput";
  bool fixed_batch_ = false;
  std::string mpirun_ = "mpirun --oversubscribe --bind-to none";
  sched::LiveOptions o_{.gpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
                        .launch = {.work_dir = "parasol-cluster"}};
  double restart_penalty_s_ = 5, horizon_s_ = 60, remaining_scale_s_ = 600;
};

}  // namespace

std::unique_ptr<Command> MakeCluster(CLI::App& parent) { return std::make_unique<ClusterCommand>(parent); }

}  // namespace parasol::tools
