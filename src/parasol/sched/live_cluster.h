// The live cluster (`parasol cluster`): real `parasol train` jobs on this machine's cores as the
// "GPUs" (one rank per core, one node), scheduled by the same policy objects as the simulator.
// At every interval, and whenever a job arrives, finishes or fails, the policy sees what each job
// has measured of itself and returns GPU counts; a job whose count changes is stopped at its
// current step (checkpoint) and restarted on the new count from there.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "parasol/sched/live_job.h"
#include "parasol/sched/policy.h"

namespace parasol::sched {

struct LiveOptions {
  int gpus = 2;
  bool adaptive = true;          // the policy chooses GPU counts (goodput); else the users' (Tiresias)
  double interval_s = 10;
  double stop_timeout_s = 60;    // a job that has not checkpointed and stopped by then is killed
  double poll_s = 0.2;
  double timeout_s = 0;          // the whole run (0: none): past it, a TimeoutError naming the jobs left
  LaunchOptions launch;
  std::ostream* log = nullptr;   // one line per start, resize, finish and failure
};

struct LiveJobResult {
  std::string name;
  double submit_time = 0, completion_time = 0;  // completion 0: failed
  double jct() const { return completion_time - submit_time; }
  int restarts = 0;
  double restart_s = 0;  // stopping plus starting up
  double gpu_s = 0;      // GPU-seconds held
};

struct LiveResult {
  std::vector<LiveJobResult> jobs;  // input order
  double average_jct = 0, max_jct = 0, makespan = 0;  // over the jobs that finished
  std::vector<std::string> failures;                  // one line per failed job
};

// Runs every job to the end (or its failure). Throws InvalidArgumentError when a fixed-count job
// asks for more GPUs than there are, TimeoutError past options.timeout_s.
LiveResult RunLive(const std::vector<LiveJobSpec>& specs, Policy& policy, const LiveOptions& options);

}  // namespace parasol::sched
