// C-SVC training by sequential minimal optimisation over the ranks of a Context: the dual
//   min_a  1/2 a'Qa - e'a   subject to 0 <= a_t <= C, y'a = 0,   Q_st = y_s y_t K(x_s, x_t),
// with the working pair chosen by second-order information (Fan, Chen and Lin 2005, as LIBSVM),
// and adaptive sample elimination (samples that stay at a bound leave the active set; the
// gradient is rebuilt and the samples come back before the end, so none is lost for good).
//
// Each rank owns a contiguous block of the samples with their multipliers, gradient and kernel
// cache; every rank holds the whole data set (the kernel needs any row against its own). An
// iteration costs two small all-gathers: the first picks i (the largest violation over every
// rank), the second j (the largest decrease of the objective given i). Choices break ties by the
// lowest sample id, so any number of ranks takes the same steps as one and ends with the same
// multipliers, bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "parasol/apps/svm/kernel.h"
#include "parasol/comm/context.h"

namespace parasol::apps::svm {

// When samples leave the active set. A sample leaves when it sits at a bound and no working pair
// with it could violate the optimality conditions by the current maximal violations (LIBSVM's
// shrinking test); the policies differ in how often that is tested and how many tests in a row
// it must pass.
enum class Elimination {
  kNone,      // every sample stays active
  kEarliest,  // tested every 100 iterations; one pass removes
  kStandard,  // tested every min(n, 1000) iterations; one pass removes (LIBSVM's shrinking)
  kLazy,      // tested every min(n, 1000) iterations; three passes in a row remove
};
Elimination ParseElimination(std::string_view name);
std::string_view EliminationName(Elimination e);

struct SmoProgress {
  uint64_t iteration = 0;
  double seconds = 0;
  double violation = 0;  // max over I_up of -y G + max over I_low of y G: 0 at the optimum
  uint64_t active = 0;   // samples in the active set, over every rank
  uint64_t support_vectors = 0;
};

struct SmoOptions {
  double c = 1;
  double tolerance = 1e-3;                     // stop when the maximal violation is below it (LIBSVM's -e)
  uint64_t cache_bytes = uint64_t{100} << 20;  // per rank
  Elimination elimination = Elimination::kStandard;
  uint64_t max_iterations = 0;     // 0: max(10^7, 100 n), as LIBSVM
  uint64_t progress_every = 1000;  // iterations between progress reports (collective)
  // Called on every rank with the same values.
  std::function<void(const SmoProgress&)> on_progress;

  // A warm start (a resumed checkpoint): every sample's multiplier, feasible (0 <= a <= C,
  // y'a = 0), and the iterations they took, which count towards max_iterations.
  std::span<const double> start_alpha;
  uint64_t start_iteration = 0;
  // Every checkpoint_every iterations (0: never), on every rank: every sample's multiplier.
  uint64_t checkpoint_every = 0;
  std::function<void(uint64_t iteration, const std::vector<double>& alpha)> on_checkpoint;
};

struct SmoResult {
  std::vector<double> alpha;  // every sample's multiplier, on every rank
  double rho = 0;             // the decision function is sum_t y_t alpha_t K(x_t, x) - rho
  double objective = 0;       // 1/2 a'Qa - e'a
  uint64_t iterations = 0;
  bool iteration_limit = false;
  uint64_t eliminations = 0;                  // samples removed from the active set (on this rank)
  uint64_t reconstructions = 0;               // gradient rebuilds after elimination
  uint64_t wrongly_eliminated = 0;            // rebuilds after which the optimisation had to go on
  uint64_t cache_hits = 0, cache_misses = 0;  // this rank's
  double seconds = 0;
};

// y[t] is +1 or -1 for each row of `kernel`; the same on every rank, as `kernel` and `o`.
// Collective. InvalidArgumentError when C <= 0, the labels are not +-1 of both signs, or a warm
// start is not feasible.
SmoResult SolveSmo(comm::Context& ctx, const KernelMatrix& kernel, std::span<const int8_t> y,
                   const SmoOptions& o);

}  // namespace parasol::apps::svm
