// Multiclass logistic regression (softmax, L2) by minibatch SGD over the ranks of a Context, the
// weight matrix kept in sync in one of two ways (Petuum's MLR):
//   - kPs: on the parameter server, one row per feature (and one for the biases) of K columns,
//     under any consistency model: a step reads the rows its samples touch and adds its update.
//   - kSfb: sufficient-factor broadcasting: each rank keeps the whole matrix; a step's update is
//     the sum over samples of u x' (u = softmax - onehot, K values; x the sparse sample), so ranks
//     all-gather the factors (u, x) of their samples and every rank applies every update.
// Under BSP both take the same steps and end with the same weights (up to the order of additions):
// the parameter server's BSP would let a read see a faster rank's updates of the same clock, so
// under BSP a step's updates wait for every rank's reads (a barrier; other models do not wait).
//
// Objective: (1/n) sum_i -log softmax(W x_i + b)[y_i] + (lambda/2) |W|^2 (biases unpenalised).
// The decay of every weight at every step costs nothing: W is held as s V, the scalar s shrinks by
// (1 - lr lambda) per step, and updates go to V divided by s, so a step touches only its samples'
// rows (on the parameter server too: every rank knows s at every clock).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "parasol/apps/mlr/mlr_model.h"
#include "parasol/comm/context.h"
#include "parasol/data/dataset.h"
#include "parasol/ps/table_config.h"

namespace parasol::apps::mlr {

enum class Comm { kPs, kSfb };
// "ps" or "sfb"; InvalidArgumentError otherwise.
Comm ParseComm(std::string_view name);
std::string_view CommName(Comm c);

// The bytes one rank sends per step under each scheme, estimated from the problem's shape (what
// `--comm auto` compares): SFB all-gathers P - 1 blocks of b samples' factors (K values, the
// sample's length and its nonzeros as index and value); the parameter server sends each touched
// row's update and each row it reads comes back (K values and a row header each way).
struct CommCost {
  double sfb_bytes = 0, ps_bytes = 0;
};
CommCost EstimateCommCost(uint64_t classes, double nonzeros_per_sample, double rows_per_step, uint64_t batch,
                          int ranks);

struct MlrOptions {
  Comm comm = Comm::kSfb;
  ps::ConsistencySpec consistency{.model = ps::Consistency::kBsp};  // kPs only
  double learning_rate = 0.5;
  double lr_decay = 0;  // epoch e (from 1) uses learning_rate / (1 + lr_decay (e - 1))
  double lambda = 1e-4;
  uint64_t batch = 64;  // samples per rank per step
  uint64_t epochs = 10;
  uint64_t seed = 1;
  uint64_t max_steps = 0;      // stop after this many steps (0: the epochs)
  std::string checkpoint_dir;  // write a checkpoint here every checkpoint_every epochs
  uint64_t checkpoint_every = 0;
  std::string resume_dir;  // start from this checkpoint (its epoch + 1 up to `epochs`)
  std::chrono::milliseconds timeout_ms{60000};
};

struct MlrEpoch {
  uint64_t epoch = 0, steps = 0;
  double seconds = 0;
  double train_loss = 0;      // mean cross-entropy of the epoch's samples at the time they were seen
  double test_accuracy = -1;  // -1 without a test set
  uint64_t bytes_sent = 0;    // by this rank so far (rank 0's; every rank's is alike)
};

struct MlrResult {
  MlrModel model;            // rank 0's; on other ranks, empty
  uint64_t first_epoch = 1;  // 1, or the checkpoint's epoch + 1
  std::vector<MlrEpoch> epochs;
  uint64_t steps = 0;
  uint64_t bytes_sent = 0;  // this rank's: SFB's all-gathers, or every parameter-server message
  double seconds = 0;
};

// Collective: every rank passes the same data sets (each trains on its block of `train`) and
// options. on_epoch runs on rank 0 after each epoch. InvalidArgumentError for fewer than two
// classes, a bad option, or a checkpoint of another scheme or shape; ParseError for a corrupt one.
// A run resumed from epoch E's checkpoint takes the steps the uninterrupted run took after E
// (each epoch's sample order depends on the seed, the rank and the epoch only).
MlrResult TrainMlr(comm::Context& ctx, const data::Dataset& train, const data::Dataset* test,
                   const MlrOptions& o, const std::function<void(const MlrEpoch&)>& on_epoch = {});

}  // namespace parasol::apps::mlr
