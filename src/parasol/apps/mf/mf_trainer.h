// Matrix factorisation by SGD through the parameter server (as in Petuum's MF app): ratings are
// split over the workers by user; item factors live in a shared table under the chosen
// consistency model, user factors in a table only their owner writes. Each clock is one pass of a
// worker over its ratings.
//
// Objective: (sum over ratings of (r - mean - u.v)^2 + lambda (|U|^2 + |V|^2)) / ratings. Rank 0
// reports it every eval_every clocks from the model's state (see ClockObjective); the evaluator
// (eval_every_ms) traces it against time, and the final state's comes after a barrier.
//
// Step: plain SGD at learning_rate, or LIBMF's adaptive step (Chin et al., "A learning-rate
// schedule for stochastic gradient methods to matrix factorization", PAKDD 2015): each row keeps
// the sum G of its gradients' mean squares, starting at 1, and steps learning_rate / sqrt(G). G
// is one more column of the row in the parameter server, so a shared item's G sums every
// worker's gradients and checkpoints carry it.
//
// Determinism: one process with one worker and any bounded model gives the same result for the
// same seed, also across a checkpoint and --resume. With more workers the order in which their
// updates meet varies from run to run, as in any asynchronous system.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parasol/apps/mf/mf_model.h"
#include "parasol/apps/mf/ratings.h"
#include "parasol/comm/context.h"
#include "parasol/ps/client.h"
#include "parasol/ps/table_config.h"

namespace parasol::apps::mf {

// The objective once every worker has finished a clock, and the time the last did. It is the
// objective of a state of the model, never the workers' own estimate: the start's, one worker's
// state at the clock, or with several workers the rows the shards hold when the last finishes it
// (workers ahead under a bound may have added some of their next clock's steps); the last clock's
// is the final state, every update applied.
struct ClockObjective {
  uint64_t clock = 0;
  double seconds = 0;
  double objective = 0;
};

enum class MfStep { kSgd, kAdaptive };

struct MfOptions {
  uint32_t rank = 16;
  float learning_rate = 0.01f;
  MfStep step = MfStep::kSgd;
  float lambda = 0.05f;
  float init_scale = 0.1f;
  uint64_t clocks = 20;  // the clock to train to (from 0, or from the checkpoint's clock)
  uint64_t seed = 1;
  int workers_per_process = 1;
  ps::Consistency consistency = ps::Consistency::kSsp;
  uint32_t staleness = 0;
  double vap_threshold = 0;
  // The item rows are read one-sided from their shards' memory (range-partitioned; BSP or SSP):
  // ps::TableConfig::one_sided_reads.
  bool one_sided_reads = false;
  // Global worker id (rank * workers_per_process + thread) that runs at 1/straggler_factor
  // speed: after each clock's work it sleeps (factor - 1) times the CPU time that work took.
  int straggler = -1;
  double straggler_factor = 1;
  std::string checkpoint_dir;  // write a checkpoint here every checkpoint_every clocks
  uint64_t checkpoint_every = 0;
  std::string resume_dir;  // start from this checkpoint
  // Rank 0 computes the exact objective of the shards' current rows this often (0: never), on a
  // thread of its own: the honest objective-against-time curve, whatever the model.
  uint32_t eval_every_ms = 0;
  // Rank 0: called in clock order, on a thread of its own, soon (within ~50 ms) after every worker
  // has reported a clock, so that a run can be watched; the last clock of several workers from
  // TrainMf's thread once every update is applied. The workers report through a table of the
  // parameter server that checkpoints leave out. Called for the last clock, and with eval_every >
  // 0 for the first and the multiples of eval_every (several workers: the newest finished clock
  // once one of those has passed): the workers evaluate their objective for those alone, a pass
  // over their ratings that costs a third of a clock's work.
  std::function<void(const ClockObjective&)> on_clock;
  uint64_t eval_every = 1;
  std::chrono::milliseconds timeout_ms{120000};
  bool keep_model = false;  // rank 0's result holds the trained model
};

// One worker's report at the end of a clock.
struct MfEvent {
  int worker = 0;
  uint64_t clock = 0;  // clocks this worker has finished
  double seconds = 0;  // since the start of training
  // Its part of the objective's sum (not yet divided by the rating count), from the parameters it
  // sees: at the start (the initial values, which every worker sees; with eval_every > 0) and with
  // one worker at the clocks on_clock is called for; else 0.
  double part = 0;
};

// The exact objective at a moment: every update the shards had applied by then, and only those.
struct Evaluation {
  double seconds = 0;
  double objective = 0;
};

struct MfResult {
  std::vector<MfEvent> events;  // every worker's, from every process, by time
  uint64_t ratings = 0;
  uint64_t first_clock = 0;    // 0, or the checkpoint's clock
  double seconds = 0;          // wall time of the training (the slowest process)
  double final_objective = 0;  // exact: after a barrier, with every update visible
  double wait_seconds = 0;     // time workers spent waiting for rows, summed over workers
  ps::PsStats stats;           // summed over processes
  // Rank 0 only, with eval_every_ms: by time, ending with the final state when the last worker
  // finished its last clock.
  std::vector<Evaluation> evaluations;
  MfModel model;  // rank 0 with keep_model: the final state, every update applied
};

// Collective: every process of ctx calls it with the same data and options.
MfResult TrainMf(comm::Context& ctx, const RatingSet& data, const MfOptions& options);

}  // namespace parasol::apps::mf
