#include "parasol/apps/sparse_linear/fit_path.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"

namespace parasol::apps::sparse_linear {

namespace {

using Clock = std::chrono::steady_clock;

// Updates between gap checks, in sweeps of the working set.
constexpr uint64_t kSweepsPerCheck = 10;
// And the work of the updates between two checks, in checks: a check is a pass over the data,
// as costly as updating every coordinate once. At 0.1 (the updates between checks were a tenth
// of the coordinates) checks were 30% of riboflavin's solver time (4,088 columns, 17 nonzero).
constexpr double kCheckWork = 0.5;
// But at most this many sweeps of the working set after a lambda's first check: each lambda of a
// warm-started path settles in a few. Riboflavin's path of 50 at 1e-4, by this bound: 15, 155
// checks; 30, 127 checks and 37,800 updates; 60, 107 and 40,685; 120, 106 and 69,515 (a check is
// a pass over the 4,088 columns, 30 sweeps of a lambda's 20 nonzero weights a sixth of one). The
// bound doubles with each further check the lambda needs: once the working set is the few
// nonzero weights, one lambda on riboflavin took 12 checks at a fixed bound where 7 sufficed.
constexpr uint64_t kMostSweeps = 60;
constexpr int kMostDoublings = 10;
// A program's model (PathProgram::model_state) is given at most this many sweeps (LIBLINEAR's
// inner iterations are bounded by 1,000).
constexpr uint64_t kMostModelSweeps = 1000;

// When the next check is due (with check_every 0): after updates that pay for it (kSweepsPerCheck
// sweeps of the working set, reading kCheckWork checks' entries) or kMostSweeps sweeps.
class CheckSpacing {
 public:
  CheckSpacing(const PathProgram& program, const PathOptions& o)
      : program_(program),
        o_(o),
        check_work_(static_cast<uint64_t>(kCheckWork * static_cast<double>(program.CheckCost()))) {}

  void Reset() {
    updates_ = work_ = 0;
    most_sweeps_ = checks_++ == 0 ? kMostSweeps : 2 * most_sweeps_;
    most_sweeps_ = std::min(most_sweeps_, kMostSweeps << kMostDoublings);
  }
  void Add(std::span<const uint32_t> block) {
    for (uint32_t j : block) work_ += program_.UpdateCost(j);
    updates_ += block.size();
  }
  bool Due(uint64_t rounds, size_t working) const {
    if (o_.check_every > 0) return rounds >= o_.check_every;
    switch (program_.model_state()) {
      // A solved model is swept on (refined) until the updates pay for the check: on the generated
      // design's classification (a million columns of five entries) a check after each solve
      // took 10 checks and 1.1 s where 3 and 0.7 s sufficed.
      case PathProgram::ModelState::kSolved:
        return work_ >= check_work_ || updates_ >= kMostModelSweeps * working;
      case PathProgram::ModelState::kSolving: return updates_ >= kMostModelSweeps * working;
      case PathProgram::ModelState::kNone: break;
    }
    return updates_ >= kSweepsPerCheck * working &&
           (work_ >= check_work_ || updates_ >= most_sweeps_ * working);
  }

 private:
  const PathProgram& program_;
  const PathOptions& o_;
  const uint64_t check_work_;
  uint64_t updates_ = 0, work_ = 0;
  uint64_t checks_ = 0, most_sweeps_ = kMostSweeps;
};

// Runs rounds at one lambda until the gap is small enough, the round limit, or divergence.
LinearFit FitOne(PathProgram& program, modelpar::RoundEngine& engine, double lambda, const PathOptions& o,
                 Clock::time_point start) {
  CheckSpacing spacing(program, o);
  const uint64_t first_round = engine.rounds();
  FitStatus status = FitStatus::kRoundLimit;
  FitCheck check;
  std::vector<uint32_t> features;
  // A check also comes at once when a value stopped being finite or no coordinate could be
  // drawn (priorities of NaN): both mean the updates diverged.
  bool now = true;
  // A check: its figures recorded, and whether it ends the fit (status set).
  auto measure = [&] {
    check = program.Check(engine);
    check.lambda = lambda;
    check.rounds = engine.rounds();
    check.updates = engine.updates();
    check.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (o.on_check) o.on_check(check);
    if (!std::isfinite(check.objective) || check.objective > 1e3 * program.null_objective() + 1) {
      status = FitStatus::kDiverged;
    } else if (check.relative_gap <= o.tolerance) {
      status = FitStatus::kConverged;
    }
    return status != FitStatus::kRoundLimit;
  };
  for (uint64_t since_round = engine.rounds();;) {
    if (now || spacing.Due(engine.rounds() - since_round, engine.scheduler().working_set_size())) {
      now = false;
      since_round = engine.rounds();
      spacing.Reset();
      if (measure()) break;
    }
    if (engine.rounds() - first_round >= o.max_rounds) {
      // The fit returned is the weights as they are: its figures must be theirs, not the last
      // check's (which may precede every round).
      if (engine.rounds() != since_round) measure();
      break;
    }
    std::span<const uint32_t> block = engine.Round();
    now = block.empty() || !program.finite();
    spacing.Add(block);
    if (o.on_round) {
      features.clear();
      for (uint32_t j : block) {
        if (program.feature(j) != PathProgram::kNoFeature) features.push_back(program.feature(j));
      }
      o.on_round(features);
    }
  }
  LinearFit fit = program.Result(lambda);
  fit.last = check;
  fit.status = status;
  return fit;
}

}  // namespace

void CheckPathOptions(const data::Dataset& d, const PathOptions& o) {
  if (d.rows() == 0 || d.nonzeros() == 0) throw InvalidArgumentError("the data set has no nonzero feature");
  if (!(o.l1_ratio > 0 && o.l1_ratio <= 1)) throw InvalidArgumentError("--l1-ratio must be in (0, 1]");
  if (!(o.lambda >= 0) || !std::isfinite(o.lambda))
    throw InvalidArgumentError("--lambda must be a finite number >= 0");
  if (o.lambda == 0 && o.path_length == 0) throw InvalidArgumentError("give --lambda or --lambda-path");
  if (!(o.path_min_ratio > 0 && o.path_min_ratio < 1))
    throw InvalidArgumentError("--lambda-min-ratio must be in (0, 1)");
  if (!(o.tolerance > 0)) throw InvalidArgumentError("--tolerance must be positive");
  if (o.max_rounds == 0) throw InvalidArgumentError("--max-rounds must be at least 1");
}

std::vector<double> PathLambdas(double lambda_max, const PathOptions& o) {
  if (o.lambda > 0) return {o.lambda};
  std::vector<double> lambdas;
  for (uint32_t k = 0; k < o.path_length; ++k) {
    const double t = o.path_length > 1 ? static_cast<double>(k) / (o.path_length - 1) : 0.0;
    lambdas.push_back(lambda_max * std::pow(o.path_min_ratio, t));
  }
  return lambdas;
}

std::vector<LinearFit> FitPath(comm::Context& ctx, PathProgram& program, const std::vector<double>& lambdas,
                               const PathOptions& o, Clock::time_point start) {
  modelpar::RoundEngine engine(ctx, program, program.coordinates(), o.engine);
  std::vector<LinearFit> fits;
  for (double lambda : lambdas) {
    program.SetLambda(lambda, o.l1_ratio);
    fits.push_back(FitOne(program, engine, lambda, o, start));
    if (fits.back().status == FitStatus::kDiverged) break;
  }
  return fits;
}

}  // namespace parasol::apps::sparse_linear
