// The trace-driven cluster simulator: replays a workload (jobs submitted over time, each an
// application with the GPUs and batch its user asked for) against measured profiles under a
// scheduling policy, and reports job completion times.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "parasol/sched/application.h"
#include "parasol/sched/policy.h"
#include "parasol/sched/sim_job.h"

namespace parasol::sched {

struct WorkloadJob {
  std::string name;
  double submit_time = 0;
  std::string application;
  int replicas = 1;
  int batch_size = 0;
};

// Reads "name,time,application,num_replicas,batch_size". Throws ParseError "file:line: ...".
std::vector<WorkloadJob> ReadWorkload(const std::string& path);

// The applications of a profiles folder (one subfolder each), loaded when first asked for.
class ApplicationSet {
 public:
  explicit ApplicationSet(std::string dir) : dir_(std::move(dir)) {}
  // Throws IoError naming the folder when there is no profile for `name`.
  const Application& Get(const std::string& name);

 private:
  std::string dir_;
  std::map<std::string, std::unique_ptr<Application>> apps_;
};

struct SimOptions {
  ClusterSpec cluster;
  double interval_s = 60;
  double restart_penalty_s = 30;
  bool adaptive_batch = false;  // jobs choose their batch sizes (else each job's own)
  // Applications that keep the workload's batch even when adaptive (the published Pollux runs
  // kept ncf at its batch of 32768 on one GPU).
  std::set<std::string> fixed_batch_applications{"ncf"};
};

struct JobResult {
  std::string name;
  std::string application;
  double submit_time = 0, completion_time = 0;
  double jct() const { return completion_time - submit_time; }
  int restarts = 0;
};

struct SimResult {
  std::vector<JobResult> jobs;  // workload order
  double average_jct = 0, p99_jct = 0, max_jct = 0, makespan = 0;
  double run_seconds = 0;               // wall time of the simulation
  double scheduling_seconds = 0;        // of which in the policy
  int64_t distributed_rule_broken = 0;  // node-intervals with two distributed jobs on one node
  double allocated_gpu_s = 0;           // GPU-seconds held by jobs (restarts included)
  double restart_gpu_s = 0;             // of which lost to restarts
  double waiting_job_s = 0;             // job-seconds submitted but holding no GPU
};

SimResult SimulateCluster(const std::vector<WorkloadJob>& workload, ApplicationSet& apps, Policy& policy,
                          const SimOptions& options);

}  // namespace parasol::sched
