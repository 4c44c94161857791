// How a cluster scheduler watches and stops a training run (`parasol cluster` drives `parasol
// train` this way): rank 0 keeps a small status file current, and a stop file asks every rank to
// checkpoint the step it is on and return, so the scheduler can restart the job on another
// number of ranks from exactly that step; a batch file asks every rank to go on at another batch
// per rank from the next step (Pollux's in-place batch change: no restart).
// The status file's format is in core/job_status.h; the batch file holds one whole number, the new
// batch per rank, and is removed once read.
#pragma once

#include <cstdint>
#include <exception>
#include <ostream>
#include <string>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/core/train_loop.h"
#include "parasol/dl/noise_scale.h"

namespace parasol::dl {

struct JobControlPaths {
  std::string status, stop, batch;  // empty: not watched
};

// Threading: the training thread of each rank. Inactive (no file touched, no collective) when
// every path is empty.
class JobControl {
 public:
  JobControl(comm::Context& ctx, JobControlPaths paths, int64_t total_steps, int64_t batch_per_rank);

  // After a step: `seconds` it took, of which `sync_seconds` exposed synchronisation, and the
  // gradient noise measured so far.
  // `progress`: scale-invariant iterations done (the steps, unless the batch is adaptive).
  void Record(int64_t steps_done, double progress, double seconds, double sync_seconds,
              const NoiseScale& noise);
  struct Request {
    bool stop = false;           // the stop file exists
    int64_t batch_per_rank = 0;  // the batch file's (0: none, or the current one)
  };
  // Collective when a stop or batch file is set (rank 0 looks, everyone learns). Throws ParseError
  // on every rank when the batch file does not hold a whole number in [1, max_batch_per_rank].
  Request Check(int64_t max_batch_per_rank);
  // The run goes on at `batch_per_rank`: the status reports it, and the step times of the old
  // batch no longer count.
  void SetBatchPerRank(int64_t batch_per_rank);
  // The final status: "stopped" or "done".
  void Finish(int64_t steps_done, double progress, bool stopped);
  // The same for a run of whole steps (RunTrainLoop's), with "stopped at step N of T" in `log`
  // (may be null) when a stop request ended it early; `checkpointed`: --checkpoint was given, so
  // the stop wrote one.
  void Finish(const TrainLoopResult& ran, std::ostream* log, bool checkpointed);

 private:
  void Write(int64_t steps_done, double progress, const std::string& state);
  // Rank 0: the batch file's number, 0 without one, -1 when malformed (batch_error_ holds why).
  int64_t ReadBatchFile(int64_t max_batch_per_rank);

  comm::Context& ctx_;
  JobControlPaths paths_;
  std::exception_ptr batch_error_;
  int64_t total_steps_, batch_per_rank_;
  std::vector<double> seconds_, sync_seconds_;  // this run's steps
  double last_write_ = -1;                      // steady seconds
  bool grad_measured_ = false;
  double grad_sqr_ = 0, grad_var_ = 0;
};

}  // namespace parasol::dl
