// The status file a training job keeps for a cluster scheduler (`parasol train --status FILE`,
// read by `parasol cluster`): "key value" lines, rewritten atomically.
//   step N             global batches done (a restart resumes here)
//   total_steps N      (scale-invariant iterations under adaptive batches)
//   progress P         scale-invariant iterations done (AdaScale; = step with a fixed batch)
//   ranks N
//   batch_per_rank N
//   step_seconds S     median of the run's recent steps (warm-up left out; 0: none yet)
//   sync_seconds S     median exposed synchronisation of the same steps
//   grad_sqr S         the gradient noise scale's parts, once measured (see dl/noise_scale.h):
//   grad_var V         |G|^2 and the variance of one sample's gradient, tr(S) (at batch B: V / B)
//   state running|stopped|done
#pragma once

#include <cstdint>
#include <string>

namespace parasol {

struct JobStatus {
  int64_t step = 0, total_steps = 0;
  double progress = 0;
  int ranks = 0;
  int64_t batch_per_rank = 0;
  double step_seconds = 0, sync_seconds = 0;
  bool grad_measured = false;  // grad_sqr and grad_var hold a measurement
  double grad_sqr = 0, grad_var = 0;
  std::string state;
};

// Throws ParseError "file:line: ..." on a malformed file, IoError when it cannot be read.
JobStatus ReadJobStatus(const std::string& path);
// Writes `status` to `path` through a temporary file and a rename (readers never see half).
void WriteJobStatus(const std::string& path, const JobStatus& status);

}  // namespace parasol
