// Data-parallel training of one model on every rank of a Context: each rank trains on its part
// of every global batch, the synchroniser keeps the parameters equal, evaluation at the end of an
// epoch is split across ranks, checkpoints are written by rank 0 and resumable.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/dl/grad_sync.h"
#include "parasol/dl/optimizer.h"
#include "parasol/dl/tensor_dataset.h"

namespace parasol::dl {

struct TrainOptions {
  std::string model = "mlp";
  DataOptions data;
  int64_t batch = 32;  // per rank
  int64_t epochs = 1;
  int64_t steps = 0;  // > 0: this many steps instead of epochs
  // The total batch may differ from the checkpoint's: the learning rate follows AdaScale's gain
  // for the measured gradient noise, and --steps/--epochs count scale-invariant iterations at the
  // base batch (the first run's total batch, kept in the checkpoint).
  bool adaptive_batch = false;
  int64_t batch_max = 0;  // > 0: the largest total batch a run may have (ranks x batch)
  OptimizerOptions optimizer;
  // The rate falls along a half cosine to 0 at the run's last step (optimizer.cosine_steps set from
  // --steps or --epochs); not with adaptive_batch, whose runs end at a progress, not a step.
  bool cosine_lr = false;
  SyncOptions sync;
  bool sync_batch_norm = false;
  // Ranks that split each example's height (spatial.h): the job's ranks form groups of this many
  // consecutive ranks, each group computing one copy of the model on `batch` examples, data
  // parallel across the groups. Batch norm's statistics cover the group (with sync_batch_norm,
  // every rank). Not with adaptive_batch or device cuda.
  int spatial_parallel = 1;
  int threads = 1;  // intra-op threads of this rank
  // "cpu", or "cuda": each rank computes on GPU (local rank mod the GPUs on its host), the
  // synchroniser mirroring the parameters in host memory (grad_sync.h).
  std::string device = "cpu";
  uint64_t seed = 1;     // model initialisation and batch order
  bool evaluate = true;  // at the end of each epoch (and of a --steps run)
  // rank 0: step,seconds (training time so far),step_seconds,samples_per_sec,loss,
  // exposed_comm_fraction,grad_sqr,grad_var_per_sample,noise_scale_samples (the gradient noise, see
  // noise_scale.h; measured when this or a status file is asked for),test_accuracy (after an
  // evaluation),peak_memory_mb (StepRecord::peak_memory_bytes, rank 0's process)
  std::string metrics_path;
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;  // steps; 0: only at the end (when checkpoint_dir is set)
  std::string resume_dir;
  // Only evaluate the checkpoint in resume_dir on the test set: no step, nothing written.
  bool eval_only = false;
  // Rank 0 writes the trained (or with eval_only the checkpoint's) model's class for every test
  // sample here: "sample predicted label" per line, samples numbered from 0 in the test set's order.
  std::string predictions_path;
  // A cluster scheduler's handles (see job_control.h): a status file rank 0 keeps current, a
  // file whose appearance makes every rank checkpoint the current step and return (REQUIRES
  // checkpoint_dir), and a file that changes the batch per rank from the next step (REQUIRES
  // adaptive_batch; at most batch_max in total).
  std::string status_path;
  std::string stop_path;
  std::string batch_path;
  std::ostream* log = nullptr;  // rank 0's progress and summaries
  bool progress_bar = false;    // redraw one line per step on log (a terminal)
};

struct StepRecord {
  int64_t step = 0;
  double seconds = 0;          // this step
  double samples_per_sec = 0;  // all ranks
  double loss = 0;             // this rank's batch
  double exposed_comm_fraction = 0;
  // The process's resident memory at its peak since the run's first step began, less before it (0
  // where Linux's /proc does not tell, or on a run without a metrics file): what training holds at
  // most beyond the model and the data (activations, gradients, the compute library's scratch).
  double peak_memory_bytes = 0;
};

struct TrainResult {
  std::vector<StepRecord> steps;
  std::vector<double> epoch_accuracy;  // test accuracy after each evaluation
  double test_accuracy = 0;
  double test_loss = 0;
  double median_step_seconds = 0;
  double median_samples_per_sec = 0;
  double exposed_comm_fraction = 0;  // over the run: waiting / training time
  int64_t first_step = 0;            // > 0 when resumed
  int64_t steps_done = 0;            // global batches done at return (resumed ones included)
  double progress = 0;               // scale-invariant iterations done (= steps_done unless adaptive)
  bool stopped = false;              // returned early at the stop file's request
  SyncStats sync;
  std::vector<LayerChoice> choices;
  torch::Tensor parameters;  // flat, after training
};

// Collective over ctx. Throws InvalidArgumentError (options), IoError/ParseError (data,
// checkpoints), and the synchroniser's errors (peer gone, timeout, mismatch).
TrainResult Train(comm::Context& ctx, const TrainOptions& options);

// Compute threads of this process: libtorch's intra-op pool and OpenBLAS's own.
void SetComputeThreads(int threads);

}  // namespace parasol::dl
