// Multi-task relationship learning (Zhang and Yeung, 2010) for regression, over the ranks of a
// Context, by the primal-dual method of distributed MTRL (Liu, Pan and Ho, 2017).
//
// For m tasks with weights W (task i's weights w_i, d values) and a task covariance Omega (m x m):
//   F(W, Omega) = sum_i 1/(2 n_i) sum_j (y_ij - w_i . x_ij)^2 + lambda1/2 |W|^2
//               + lambda2/2 (tr(W Omega^-1 W') + epsilon tr(Omega^-1)),  Omega > 0, tr Omega = 1.
// (epsilon keeps Omega invertible.) F is jointly convex; the solver alternates two exact steps:
//  - weights, Omega fixed: the dual of this step has one variable alpha_ij per sample and
//    w_i = sum_k Sigma_ik v_k, with v_k = sum_j alpha_kj x_kj and Sigma = (lambda1 I +
//    lambda2 Omega^-1)^-1. Each rank owns a block of tasks (their samples and alphas). A round:
//    every rank ascends its alphas on a local subproblem, in which the coupling with other ranks'
//    tasks is bounded by sigma' = ranks (as CoCoA+ does), adds its tasks' change of V to the
//    parameter server (d values per task) and reads V back. The data never moves.
//  - Omega, W fixed: (W W' + epsilon I)^1/2 over its trace. Each rank works out its tasks' rows
//    of W from V (the last round's under BSP, else read after a global barrier) and its rows of
//    Sigma; W is summed over the ranks (m x d values, with the objective's sums) and every rank
//    fits the same Omega, from the d x d matrix W'W when there are fewer features than tasks
//    (O(m d^2), not O(m^3): School's 139 tasks have 28 features).
// `rounds` weight rounds separate two Omega steps; the objective reported after an iteration is
// F at the current W and the Omega fitted to it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parasol/apps/mtrl/task_set.h"
#include "parasol/comm/context.h"
#include "parasol/ps/table_config.h"

namespace parasol::apps::mtrl {

struct MtrlOptions {
  double lambda1 = 1e-3, lambda2 = 0.1, epsilon = 1e-6;
  bool learn_covariance = true;  // false: Omega stays I / m (lambda2 then acts as more ridge)
  uint64_t iterations = 1000;    // Omega steps at most
  // Weight rounds per iteration, and passes over a rank's samples per round. Convergence goes
  // mostly with the number of Omega steps (School at epsilon 1e-3: about 550 whatever the
  // rounds), so more weight work between two of them costs time and buys little.
  uint64_t rounds = 1;
  uint64_t local_passes = 1;
  // Stop once the objective changed by less than this (relative) in an iteration and the weight
  // step's duality gap is below it (relative to the objective).
  double tolerance = 1e-6;
  uint64_t seed = 1;
  ps::ConsistencySpec consistency{.model = ps::Consistency::kBsp};
  std::string checkpoint_dir;  // write a checkpoint here every checkpoint_every iterations
  uint64_t checkpoint_every = 0;
  std::string resume_dir;
  std::chrono::milliseconds timeout_ms{60000};
};

struct MtrlIteration {
  uint64_t iteration = 0, rounds = 0;
  double seconds = 0;
  double objective = 0;                 // F(W, Omega fitted to W)
  double duality_gap = 0;               // of the weight step just ended, at the Omega it used
  double train_mse = 0;                 // mean over the training samples
  double test_explained_variance = -2;  // < -1 without a test set
  uint64_t bytes_sent = 0;              // by this rank so far
};

struct MtrlModel {
  std::vector<int64_t> task_ids;
  size_t features = 0;
  std::vector<double> weights;  // tasks x features
  std::vector<double> omega;    // tasks x tasks
  // One prediction per sample of s; InvalidArgumentError for a task the model lacks.
  std::vector<double> Predict(const TaskSet& s) const;
};

struct MtrlResult {
  MtrlModel model;  // on every rank
  std::vector<MtrlIteration> iterations;
  uint64_t first_iteration = 1;  // 1, or the checkpoint's + 1
  bool converged = false;
  double seconds = 0;
  uint64_t bytes_sent = 0;
};

// Collective: every rank passes the same sets and options. on_iteration runs on rank 0.
// InvalidArgumentError for a bad option, a test task the training set lacks, or a checkpoint of
// another problem; ParseError for a corrupt checkpoint.
MtrlResult TrainMtrl(comm::Context& ctx, const TaskSet& train, const TaskSet* test, const MtrlOptions& o,
                     const std::function<void(const MtrlIteration&)>& on_iteration = {});

}  // namespace parasol::apps::mtrl
