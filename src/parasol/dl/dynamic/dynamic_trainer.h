// Training a dynamic network (Tree-LSTM on SST, an LSTM over variable-length lines, Tree-FC),
// data parallel over the ranks: every rank takes its share of each global batch of examples, runs
// it through the executor, and the synchroniser (after backward: the levels' backward reaches a
// parameter once per level) averages the gradients; Adam. After each epoch, root accuracy (SST:
// fine-grained, and binary on the non-neutral roots from the summed class probabilities) or
// perplexity (LSTM) on the validation and test sets, split over the ranks.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/dl/dynamic/dynamic_net.h"
#include "parasol/dl/dynamic/schedule.h"
#include "parasol/dl/grad_sync.h"
#include "parasol/dl/job_control.h"
#include "parasol/dl/optimizer.h"

namespace parasol::dl::dynamic {

struct DynamicTrainOptions {
  std::string model = "tree-lstm";  // tree-lstm (--data: an SST folder), lstm-lm (a text file), tree-fc
  std::string data;
  std::string embeddings_path;  // word vectors ("word v1 ... vD"); empty: random
  int64_t embedding = 300, hidden = 150;
  double dropout = 0.5;
  Batching batching = Batching::kBatched;
  bool hoist_inputs = true;
  int64_t batch = 25;  // examples per rank and step
  int64_t epochs = 10;
  int64_t steps = 0;                          // > 0: instead of epochs
  int64_t tree_count = 1024, tree_depth = 8;  // tree-fc's synthetic trees
  OptimizerOptions optimizer{.kind = OptimizerKind::kAdam, .lr = 2e-3, .momentum = 0, .weight_decay = 1e-4};
  SyncOptions sync{.mode = SyncMode::kAfterBackward};
  int threads = 1;
  uint64_t seed = 1;
  bool evaluate = true;
  // rank 0: step,seconds (cumulative),step_seconds,samples_per_sec,loss,dev_fine,test_fine,
  // dev_binary,test_binary (tree-lstm),dev_perplexity (lstm-lm): the evaluation's after an epoch
  std::string metrics_path;
  // Checkpoints (dl/rank_checkpoint.h: rank 0 writes the replicated parameters and Adam moments)
  // every checkpoint_every steps (0: at the end only) when a folder is given; resume_dir: go on
  // from one, with the same ranks, batch and model (else InvalidArgumentError): dropout is drawn
  // per step from the seed, so the resumed run retraces the uninterrupted one.
  std::string checkpoint_dir, resume_dir;
  int64_t checkpoint_every = 0;
  // A scheduler's status and stop files (dl/job_control.h; a batch file is not taken).
  JobControlPaths control;
  std::ostream* log = nullptr;  // rank 0
};

struct DynamicEvaluation {
  int64_t epoch = 0;
  double dev_fine = 0, dev_binary = 0, test_fine = 0, test_binary = 0;  // tree-lstm: root accuracy
  double dev_perplexity = 0;                                            // lstm-lm
};

struct DynamicResult {
  std::vector<double> step_seconds;
  double median_samples_per_sec = 0;  // all ranks
  std::vector<DynamicEvaluation> evaluations;
  int best_evaluation = -1;  // tree-lstm: the epoch with the best fine-grained dev accuracy (model selection)
  double final_loss = 0;     // this rank's last batch: cross-entropy per labelled vertex
  torch::Tensor parameters;  // flat, after training
  int64_t steps_done = 0;
  bool stopped = false;  // the stop file ended the run (checkpointed at steps_done with checkpoints on)
};

// Collective over ctx. InvalidArgumentError (options: a --sync other than after-backward), IoError
// and ParseError (data), and the synchroniser's errors.
DynamicResult TrainDynamic(comm::Context& ctx, const DynamicTrainOptions& options);

}  // namespace parasol::dl::dynamic
