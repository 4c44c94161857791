// Training a C-SVC of any number of classes as LIBSVM does: one two-class machine per pair of
// classes (one in all for two classes), each solved by SMO over the ranks of a Context.
#pragma once

#include <functional>
#include <string>

#include "parasol/apps/svm/smo_solver.h"
#include "parasol/apps/svm/svm_model.h"
#include "parasol/comm/context.h"
#include "parasol/data/dataset.h"

namespace parasol::apps::svm {

struct PairReport {
  size_t pair = 0;               // its place among the pairs (SvmModel::rho's order)
  double first = 0, second = 0;  // the two classes' labels (first is y = +1)
  size_t samples = 0;
  uint64_t support_vectors = 0, bounded = 0;  // a > 0, a = C
  bool restored = false;                      // taken from the checkpoint resumed, not trained in this run
  // The solver's result; of a restored machine only alpha, rho, objective and iterations.
  SmoResult result;
};

struct SvmCallbacks {
  std::function<void(size_t pair, const SmoProgress&)> on_progress;  // every rank, alike
  std::function<void(const PairReport&)> on_pair;                    // every rank, alike
};

struct SvmCheckpointing {
  std::string dir;                // rank 0 writes a checkpoint here after each machine; empty: none
  uint64_t every_iterations = 0;  // and within a machine every this many iterations (0: not)
  std::string resume_dir;         // go on from this checkpoint (every rank reads it)
};

// Collective: every rank passes the same data set and options, and gets the same model.
// InvalidArgumentError when the data set has fewer than two classes or the checkpoint to resume
// is of another problem; the checkpoint reader's errors (svm_checkpoint.h).
SvmModel TrainOneVsOne(comm::Context& ctx, const data::Dataset& d, const KernelParams& kernel,
                       const SmoOptions& o, const SvmCallbacks& callbacks = {},
                       const SvmCheckpointing& checkpointing = {});

}  // namespace parasol::apps::svm
