// What the L1-penalised linear models on the STRADS engine share: the fit's records, the options,
// the loop over a lambda path (rounds between duality-gap checks, warm starts, divergence), and
// the model file. Each model (Lasso, logistic regression) is a PathProgram: a modelpar::CoordinateProgram
// that can also check its duality gap and hand back its weights.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/data/dataset.h"
#include "parasol/modelpar/round_engine.h"

namespace parasol::apps::sparse_linear {

// What a duality-gap check found (one metrics row).
struct FitCheck {
  double lambda = 0;
  uint64_t rounds = 0, updates = 0;
  double seconds = 0;
  double objective = 0;
  double gap = 0;           // primal minus dual objective
  double relative_gap = 0;  // gap / the objective at w = 0
  uint64_t nonzeros = 0;
};

enum class FitStatus { kConverged, kRoundLimit, kDiverged };

struct LinearFit {
  double lambda = 0;
  double intercept = 0;
  std::vector<std::pair<uint32_t, double>> weights;  // (feature id, weight), nonzeros only
  FitCheck last;
  FitStatus status = FitStatus::kConverged;
};

struct PathOptions {
  // One lambda, or (lambda 0) a path of path_length values from lambda_max down to
  // lambda_max * path_min_ratio, log-spaced, each fit starting from the previous one.
  double lambda = 0;
  uint32_t path_length = 0;
  double path_min_ratio = 1e-3;
  double l1_ratio = 1.0;
  bool intercept = true;
  double tolerance = 1e-6;        // on the relative duality gap
  uint64_t max_rounds = 1000000;  // per lambda
  // Rounds between duality-gap checks (each a pass over the data); 0: at least ten sweeps of the
  // working set, and then updates that read half the entries a check reads, or sixty sweeps
  // (twice as many after each further check of the lambda); for a program with a model
  // (PathProgram::model_state), once the model is solved and the updates read half a check's
  // entries, or after 1,000 sweeps (fit_path.cc's CheckSpacing).
  uint64_t check_every = 0;
  modelpar::EngineOptions engine;
  std::function<void(const FitCheck&)> on_check;
  // Called with every block a round updated, as feature ids (tests check the schedule).
  std::function<void(std::span<const uint32_t> features)> on_round;
};

// The proximal step of L1: argmin_v (v - z)^2 / 2 + t |v|.
inline double SoftThreshold(double z, double t) { return z > t ? z - t : (z < -t ? z + t : 0.0); }

// A model the path loop drives. Coordinates are 0..coordinates()-1; coordinate j is feature
// feature(j) (kNoFeature for a coordinate that is not a feature, such as an intercept).
class PathProgram : public modelpar::CoordinateProgram {
 public:
  static constexpr uint32_t kNoFeature = UINT32_MAX;

  // The penalty from now on: lambda l1_ratio ||w||_1 + lambda (1 - l1_ratio)/2 ||w||^2.
  virtual void SetLambda(double lambda, double l1_ratio) = 0;
  // A duality-gap check (collective, a pass over the data). It also restricts the scheduler's
  // working set to the coordinates that are nonzero or would move now.
  virtual FitCheck Check(modelpar::RoundEngine& engine) = 0;
  virtual LinearFit Result(double lambda) const = 0;
  virtual uint32_t coordinates() const = 0;
  virtual uint32_t feature(uint32_t j) const = 0;
  virtual double null_objective() const = 0;  // the objective at w = 0 (and the best intercept)
  virtual bool finite() const = 0;            // false once a value became inf or NaN
  // The entries an update of coordinate j reads (its column's), and those a check reads (every
  // one): the path loop spaces its checks by them.
  virtual uint64_t UpdateCost(uint32_t j) const = 0;
  virtual uint64_t CheckCost() const = 0;

  // A program whose updates between two checks minimise a model the last check made (a Newton
  // step's quadratic model, as LIBLINEAR's newGLMNET) says how far that is: the next check is due
  // once the model is solved as well as this outer step needs. kNone: no such model; checks are
  // spaced by their cost.
  enum class ModelState { kNone, kSolving, kSolved };
  virtual ModelState model_state() const { return ModelState::kNone; }
};

// InvalidArgumentError for options outside their range or a data set with nothing to fit.
void CheckPathOptions(const data::Dataset& d, const PathOptions& o);

// The lambdas to fit: o.lambda, or the path from lambda_max down.
std::vector<double> PathLambdas(double lambda_max, const PathOptions& o);

// Fits every lambda in turn, each from the previous solution (collective). Checks' seconds count
// from `start`.
std::vector<LinearFit> FitPath(comm::Context& ctx, PathProgram& program, const std::vector<double>& lambdas,
                               const PathOptions& o, std::chrono::steady_clock::time_point start);

}  // namespace parasol::apps::sparse_linear
