// How a cluster scheduler watches and stops a training run (`parasol cluster` drives `parasol
// train` this way): rank 0 keeps a small status file current, and a stop file asks every rank to
// checkpoint the step it is on and return, so the scheduler can restart the job on another
// number of ranks from exactly that step.
// The status file's format is in core/job_status.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/dl/noise_scale.h"

namespace parasol::dl {

// Threading: the training thread of each rank. Inactive (no file touched, no collective) when
// both paths are empty.
class JobControl {
 public:
  JobControl(comm::Context& ctx, std::string status_path, std::string stop_path, int64_t total_steps,
             int64_t batch_per_rank);

  // After a step: `seconds` it took, of which `sync_seconds` exposed synchronisation, and the
  // gradient noise measured so far.
  // `progress`: scale-invariant iterations done (the steps, unless the batch is adaptive).
  void Record(int64_t steps_done, double progress, double seconds, double sync_seconds, const NoiseScale& noise);
  // Collective when a stop file is set (rank 0 looks, everyone learns): true when it exists.
  bool StopRequested();
  // The final status: "stopped" or "done".
  void Finish(int64_t steps_done, double progress, bool stopped);

 private:
  void Write(int64_t steps_done, double progress, const std::string& state);

  comm::Context& ctx_;
  std::string status_path_, stop_path_;
  int64_t total_steps_, batch_per_rank_;
  std::vector<double> seconds_, sync_seconds_;  // this run's steps
  double last_write_ = -1;                       // steady seconds
  bool grad_measured_ = false;
  double grad_sqr_ = 0, grad_var_ = 0;
};

}  // namespace parasol::dl
