// What a scheduling policy sees of a job. The simulator's jobs (SimJob, progress from measured
// profiles) and the live runner's (LiveJob, real `parasol train` processes) both present it, so
// one policy object drives either.
#pragma once

#include <optional>
#include <string>

#include "parasol/sched/goodput.h"

namespace parasol::sched {

// The latest submit time a workload or job file may give (about 115 days): a simulated cluster
// advances in fixed rounds, so a far-off (or infinite) submit time would never be reached.
inline constexpr double kMaxSubmitSeconds = 1e7;

// The batch sizes a job may run: the total it started with, the largest total, and the per-GPU
// range (one pass).
struct BatchLimits {
  int init_batch = 0;
  int max_batch = 0;
  int min_local = 1;
  int max_local = 1;
  bool accumulate = true;  // may take accumulation steps (a live `parasol train` job cannot)
};

class Job {
 public:
  virtual ~Job() = default;
  virtual const std::string& name() const = 0;
  virtual double submit_time() const = 0;
  virtual int requested_replicas() const = 0;
  virtual double attained_service() const = 0;  // GPU-seconds held so far
  // The scheduler chooses an adaptive job's GPU count (and batch, within its limits); a fixed job
  // runs on the GPUs its user asked for.
  virtual bool adaptive() const = 0;
  // What the job has measured of itself as a goodput model; nullopt before the first measurement.
  virtual std::optional<GoodputModel> Model() const = 0;
  // Most GPUs worth considering now, and whether a count suits the job at all.
  virtual int MaxUsefulReplicas() const = 0;
  virtual bool AllowsReplicas(int /*replicas*/) const { return true; }
  virtual BatchLimits batch_limits() const = 0;
  // Work left, in iterations at the initial batch (users declare their epochs or steps).
  virtual double remaining_iterations() const = 0;
  // What stopping and restarting has cost this job on average, in seconds (0: not measured).
  virtual double measured_restart_s() const { return 0; }
};

}  // namespace parasol::sched
