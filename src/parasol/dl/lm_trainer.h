// Training a Transformer language model over D x T ranks (see parallel_groups.h): each of the D
// replicas takes its share of every global batch of random windows of the training text, its T
// ranks split the model (tensor parallelism), mixture-of-experts layers spread their experts over
// P replicas; the dense gradients are averaged over the replicas by the synchroniser (any --sync
// mode), the experts' only over the replicas that hold them. Validation loss and perplexity after
// each epoch, the validation windows split over the replicas and summed.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/dl/grad_sync.h"
#include "parasol/dl/job_control.h"
#include "parasol/dl/optimizer.h"
#include "parasol/dl/text_tokens.h"
#include "parasol/dl/transformer.h"

namespace parasol::dl {

struct LmOptions {
  TransformerOptions model;  // model.vocab comes from the data
  std::string data_path;
  TextLevel level = TextLevel::kChar;
  double validation_fraction = 0.1;  // the text's last lines
  int64_t batch = 16;                // sequences of model.seq tokens per replica and step
  int64_t epochs = 1;                // an epoch: as many tokens as the training text holds
  int64_t steps = 0;                 // > 0: this many steps instead
  OptimizerOptions optimizer{.kind = OptimizerKind::kAdam, .lr = 1e-3, .momentum = 0};
  SyncOptions sync;
  int tensor_parallel = 1;
  int expert_parallel = 1;
  // Weight of each MoE layer's load-balancing loss: ST-MoE's 0.01 left the busiest expert at 1.24-1.27x
  // the mean on tinyshakespeare (bench/moe_bench.sh), 0.02 at 1.20x with a lower validation loss.
  double aux_loss_coef = 0.02;
  double z_loss_coef = 0.001;  // weight of each MoE layer's router z-loss
  int threads = 1;
  uint64_t seed = 1;
  bool evaluate = true;
  int64_t eval_batches = 0;  // at most this many validation batches of `batch` windows (0: all)
  // rank 0: step,seconds
  // (cumulative),step_seconds,tokens_per_sec,loss,balance_loss,z_loss,expert_load_max_over_mean,
  // dropped_fraction,val_loss,val_perplexity (the last two on evaluation steps)
  std::string metrics_path;
  // Checkpoints (rank_checkpoint.h) every checkpoint_every steps (0: at the end only) when a folder
  // is given; resume_dir: go on from the one there (the same ranks, layout and model), retracing
  // the uninterrupted run's batches.
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  std::string resume_dir;
  // A scheduler's status and stop files (job_control.h; a batch file is not taken).
  JobControlPaths control;
  std::ostream* log = nullptr;  // rank 0's lines
};

struct LmStep {
  int64_t step = 0;
  double seconds = 0;
  double tokens_per_sec = 0;            // all replicas
  double loss = 0;                      // this replica's language-model loss (cross-entropy per token)
  double balance_loss = 0, z_loss = 0;  // summed over MoE layers, this rank
  double expert_load = 0;               // tokens routed to the busiest expert / the mean, over all replicas
  double dropped_fraction = 0;          // choices past capacity, over all replicas
};

struct LmEvaluation {
  int64_t step = 0;  // steps done
  double loss = 0, perplexity = 0;
  int64_t tokens = 0;
};

struct LmResult {
  int64_t first_step = 0;  // > 0 when resumed
  int64_t steps_done = 0;
  bool stopped = false;  // the stop file ended the run (checkpointed at steps_done with checkpoints on)
  std::vector<LmStep> steps;
  std::vector<LmEvaluation> evaluations;
  double median_tokens_per_sec = 0;
  int64_t parameters = 0;  // on this rank
  int64_t vocab = 0;
  SyncStats sync;
};

// Collective over `world`. Throws InvalidArgumentError (options, shapes), IoError/ParseError (the
// text), MismatchError (ranks with another layout) and the synchroniser's errors.
LmResult TrainLm(comm::Context& world, const LmOptions& options);

// The validation loss of the model as it stands (no training), over the replicas: for tests.
LmEvaluation EvaluateLm(ParallelGroups& groups, TransformerLm& lm, const std::vector<int64_t>& tokens,
                        int64_t seq, int64_t batch, int64_t max_batches);

}  // namespace parasol::dl
