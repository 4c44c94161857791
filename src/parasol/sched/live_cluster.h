// The live cluster (`parasol cluster`): real `parasol train` jobs on this machine's cores as the
// "GPUs" (one rank per core, one node), or on the slots of several hosts (a node each, jobs
// launched there with `mpirun --host`), scheduled by the same policy objects as the simulator.
// At every interval, whenever a job arrives, finishes or fails, and (goodput) when a job has
// measured a GPU count it had not run before, the policy sees what each job has measured of
// itself and returns GPU counts and where; a job whose count changes is stopped at its current
// step (checkpoint) and restarted on the new count from there. Between rounds, every
// `rebatch_interval_s`, a running job with an adaptive batch whose model gives another batch 5%
// more goodput on its ranks is asked to change batch in place (see live_job.h).
//
// Hosts: when a job's run fails, or reports no new step for `stall_timeout_s`, each of its hosts
// is probed (the launcher starts `true` there); a host where that fails, or does not end within
// `host_probe_timeout_s`, is lost: every job with ranks there is killed and queued again (it
// resumes from its last checkpoint: jobs that should survive a host give `--checkpoint-every` in
// their train_args), and the policy schedules on the hosts left. The work folder must be shared by the hosts
// (the jobs' status files and checkpoints are read and written there).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "parasol/core/env.h"
#include "parasol/sched/host_file.h"
#include "parasol/sched/live_job.h"
#include "parasol/sched/policy.h"

namespace parasol::sched {

struct LiveOptions {
  int gpus = 2;                  // on this machine, when `hosts` is empty
  std::vector<Host> hosts;       // else the cluster's nodes (equal slots)
  double stall_timeout_s = 120;  // hosts: a run without a new step this long has its hosts probed
  double host_probe_timeout_s = 20;
  double host_retry_s = 60;  // hosts: a lost host is probed this often, rejoins if it answers (0: never)
  bool adaptive = true;      // the policy chooses GPU counts (goodput); else the users' (Tiresias)
  double interval_s = 10;
  double rebatch_interval_s = 2;
  double stop_timeout_s = 60;  // a job that has not checkpointed and stopped by then is killed
  double poll_s = 0.2;
  // Its clock is the schedule's time (submit times, intervals, polls, the timeout; by default the
  // machine's). What it names must outlive the run.
  Env env;
  double timeout_s = 0;  // the whole run (0: none): past it, a TimeoutError naming the jobs left
  LaunchOptions launch;
  std::ostream* log = nullptr;  // one line per start, resize, finish and failure
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
  std::vector<LiveJobResult> jobs;                    // input order
  double average_jct = 0, max_jct = 0, makespan = 0;  // over the jobs that finished
  std::vector<std::string> failures;                  // one line per failed job
  std::vector<std::string> lost_hosts;
  std::vector<std::string> returned_hosts;  // lost, then answered a later probe
};

// Runs every job to the end (or its failure). Throws InvalidArgumentError when a fixed-count job
// asks for more GPUs than there are, TimeoutError past options.timeout_s, UnavailableError when
// every host is lost.
LiveResult RunLive(const std::vector<LiveJobSpec>& specs, Policy& policy, const LiveOptions& options);

}  // namespace parasol::sched
