// A real training job under the live cluster (`parasol cluster`): a `parasol train` process
// group on as many ranks as it has "GPUs" (cores here), watched through its status file and
// resized by stop (checkpoint at the current step) and restart from that checkpoint. The
// scheduler learns the job's step time at each (ranks, batch per rank) it has run and fits the
// goodput model's throughput form to them.
//
// A job whose train_args give `--batch-max` above its batch has an adaptive batch under the
// goodput policy (Pollux): each run's total batch is chosen for its rank count from the goodput
// model, with the statistical efficiency from the noise scale the job reports (a batch per rank at
// most twice the largest measured: the throughput fit is a guess beyond that), and the job runs
// with `--adaptive-batch` (AdaScale's learning rate; progress in scale-invariant iterations at the
// first batch). Between resizes its batch changes in place, as Pollux's agent does: the scheduler
// writes a new batch per rank into the run's batch file, and the run takes it at its next step
// (no restart). Otherwise its total batch stays what the user asked for, split over the ranks, so
// every count trains the same model (see dl_test's stop-and-resize test).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "parasol/core/clock.h"
#include "parasol/core/deadline.h"
#include "parasol/core/job_status.h"
#include "parasol/core/subprocess.h"
#include "parasol/sched/job.h"

namespace parasol::sched {

struct LiveJobSpec {
  std::string name;
  double submit_time = 0;
  int replicas = 1;                     // the user's GPU count (fixed-count policies run it on this many)
  int batch = 1;                        // total per step, split over the ranks
  int max_batch = 0;                    // from train_args' --batch-max (0: none, the batch is fixed)
  int64_t steps = 1;                    // scale-invariant iterations at `batch` under an adaptive batch
  std::vector<std::string> train_args;  // the rest of the `parasol train` command line
};

// Reads "name,time,num_replicas,batch_size,steps,train_args" (train_args space-separated; the
// runner's own flags such as --batch or --checkpoint are refused; --batch-max must be at least
// batch_size). Throws ParseError "file:line: ..." and IoError.
std::vector<LiveJobSpec> ReadLiveJobs(const std::string& path);

// A run's ranks per host, in rank order (host names as mpirun's --host takes them).
using HostRanks = std::vector<std::pair<std::string, int>>;

struct LaunchOptions {
  std::string parasol;  // the parasol binary
  // Launcher and its flags for more than one rank, or any rank on a named host ("[--host H:K,...]
  // -np N" follows).
  std::vector<std::string> mpirun;
  std::vector<std::string> env;  // added to each job's environment
  std::string work_dir;          // one folder per job under it
};

// Threading: one thread (the live cluster's loop).
class LiveJob : public Job {
 public:
  // `adaptive`: the scheduler chooses the GPU count (else the user's). Times are seconds on `clock`
  // (the cluster's; it must outlive the job) since `origin` (the cluster's start).
  LiveJob(LiveJobSpec spec, const LaunchOptions& launch, bool adaptive, Clock& clock,
          Clock::TimePoint origin);

  // Job.
  const std::string& name() const override { return spec_.name; }
  double submit_time() const override { return spec_.submit_time; }
  int requested_replicas() const override { return spec_.replicas; }
  double attained_service() const override { return attained_service_; }
  bool adaptive() const override { return adaptive_; }
  std::optional<GoodputModel> Model() const override;
  // Twice the most ranks it has run on (its model is not trusted further), at most its (largest)
  // batch.
  int MaxUsefulReplicas() const override;
  // A fixed batch must split evenly over the ranks; an adaptive one needs a sample per rank.
  bool AllowsReplicas(int replicas) const override;
  BatchLimits batch_limits() const override;
  double remaining_iterations() const override { return static_cast<double>(spec_.steps) - progress_; }
  // Start-up and stopping over the runs started.
  double measured_restart_s() const override {
    return restarts_ < 0 ? 0 : restart_seconds_ / (restarts_ + 1);
  }
  // Whether this job's batch changes with its allocation (see the file comment).
  bool adaptive_batch() const { return adaptive_ && spec_.max_batch > spec_.batch; }

  enum class State { kWaiting, kRunning, kStopping, kDone, kFailed };
  State state() const { return state_; }
  int ranks() const { return ranks_; }                       // of the current run; 0 when none
  int max_ranks_measured() const { return max_ranks_run_; }  // 0 until a step time is known
  int batch() const { return batch_; }                       // total, of the current or the last run
  // Running, but no step of this run has been reported yet.
  bool starting() const { return state_ == State::kRunning && !run_measured_; }
  int64_t steps_done() const { return steps_done_; }
  // False after a lost run until the next run reports: it resumes from its last checkpoint, which
  // may be before steps_done().
  bool steps_known() const { return steps_known_; }
  int restarts() const { return restarts_; }
  double restart_seconds() const { return restart_seconds_; }  // stopping plus starting up, all runs
  std::optional<double> completion_time() const { return completion_; }
  const std::string& failure() const { return failure_; }  // when kFailed: why, with the log's path

  // Starts (or resumes from its checkpoint) on `replicas` ranks, at the batch the goodput model
  // chooses for that count when the batch is adaptive: on this machine when `hosts` is empty, else
  // through the launcher on those hosts (their ranks sum to `replicas`). REQUIRES: state() kWaiting.
  void Start(int replicas, const HostRanks& hosts = {});
  // The total batch a run on `replicas` ranks over `nodes` hosts would get now.
  int ChooseBatch(int replicas, int nodes = 1) const;
  // A total batch for the current run whose modelled goodput is at least `min_gain` times the
  // current one's; none while the run starts, before it has measured its noise, or while an
  // earlier change is not yet taken.
  std::optional<int> BetterBatch(double min_gain) const;
  // Asks the run to go on at `total` (split over its ranks) from its next step; batch() follows
  // once its status shows it. REQUIRES: state() kRunning, adaptive_batch(), `total` a multiple of
  // ranks() within --batch-max.
  void ChangeBatch(int total);
  // The hosts of the current run, or of the last one when none runs.
  const HostRanks& hosts() const { return hosts_; }
  // Seconds the current run has gone without reporting a new step after its first (0 when it is
  // not running or still starting).
  double stalled_s() const;
  // Ends the current run, if any, by killing it, and puts the job back in the queue (it resumes
  // from its last checkpoint); for a run lost with its host. REQUIRES: state() kRunning or kFailed.
  void Requeue();
  // Ends the job as failed with `why` (a job that can no longer be run).
  void Abandon(std::string why);
  // Asks the run to checkpoint and stop, and waits until it has (the job ends kWaiting, or kDone
  // when it finished first). Past `deadline` the run is killed; it will resume from its last
  // checkpoint. REQUIRES: state() kRunning.
  void Stop(Deadline deadline);
  // Reads the status and notices the end of the run; call often while it runs.
  void Poll();

 private:
  double Now() const;
  void ChargeService();  // GPU-seconds held since the last charge
  // Kills the run and puts the job back in the queue (Requeue's and a stuck Stop's end).
  void KillRun();
  void ReadStatus();
  void Observe(const JobStatus& s);
  void Ended(int exit_status);
  std::string Path(const std::string& file) const;

  LiveJobSpec spec_;
  LaunchOptions launch_;
  bool adaptive_;
  Clock& clock_;
  Clock::TimePoint origin_;
  State state_ = State::kWaiting;
  std::unique_ptr<Subprocess> process_;
  int ranks_ = 0, nodes_ = 1, restarts_ = -1, max_ranks_run_ = 0;
  HostRanks hosts_;
  int64_t max_local_run_ = 0;  // the largest batch per rank measured
  int batch_;
  int asked_batch_ = 0;  // in place, not yet taken (0: none)
  int64_t steps_done_ = 0, run_first_step_ = 0;
  double progress_ = 0;  // scale-invariant iterations (= steps under a fixed batch)
  std::optional<std::pair<double, double>> noise_;  // the latest |G|^2 and per-sample variance
  double accounted_until_ = 0, attained_service_ = 0, restart_seconds_ = 0, run_started_ = 0;
  double last_step_at_ = 0;    // when the current run last reported a new step
  bool run_measured_ = false;  // the current run has reported a step
  bool steps_known_ = true;
  std::string status_error_;  // the last unreadable status file's error, logged once
  std::optional<double> completion_;
  std::string failure_;
  // By (hosts, ranks, batch per rank): the latest median of that shape's runs.
  std::map<std::tuple<int, int, int64_t>, PerfObservation> observed_;
  std::optional<PerfParams> perf_;
  GoodputModel::Corrections corrections_;
};

}  // namespace parasol::sched
