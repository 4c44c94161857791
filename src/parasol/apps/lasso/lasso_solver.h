// Lasso and elastic net by model-parallel coordinate descent on the STRADS round engine:
// scheduled blocks of coordinates whose columns are not correlated are updated together, each
// worker (a thread of a rank) holding a slice of the samples and their residuals.
//
// The objective is scikit-learn's, so results compare directly:
//   (1/2n) ||y - Xw - b||^2 + lambda l1_ratio ||w||_1 + lambda (1 - l1_ratio)/2 ||w||^2
// with an unpenalised intercept b (unless intercept is off). The intercept is handled by
// centring, implicitly: sparse columns stay sparse, and the residual carries one shared offset.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/data/dataset.h"
#include "parasol/modelpar/round_engine.h"

namespace parasol::apps::lasso {

// What a duality-gap check found (one metrics row).
struct LassoCheck {
  double lambda = 0;
  uint64_t rounds = 0, updates = 0;
  double seconds = 0;
  double objective = 0;
  double gap = 0;           // primal minus dual objective
  double relative_gap = 0;  // gap / the objective at w = 0
  uint64_t nonzeros = 0;
};

enum class FitStatus { kConverged, kRoundLimit, kDiverged };

struct LassoFit {
  double lambda = 0;
  double intercept = 0;
  std::vector<std::pair<uint32_t, double>> weights;  // (feature id, weight), nonzeros only
  LassoCheck last;
  FitStatus status = FitStatus::kConverged;
};

struct LassoOptions {
  // One lambda, or (lambda 0) a path of path_length values from lambda_max down to
  // lambda_max * path_min_ratio, log-spaced, each fit starting from the previous one.
  double lambda = 0;
  uint32_t path_length = 0;
  double path_min_ratio = 1e-3;
  double l1_ratio = 1.0;
  bool intercept = true;
  double tolerance = 1e-6;        // on the relative duality gap
  uint64_t max_rounds = 1000000;  // per lambda
  // Rounds between duality-gap checks (each a pass over the data); 0: as many updates as ten
  // sweeps of the working set, and at least a tenth of the coordinates.
  uint64_t check_every = 0;
  modelpar::EngineOptions engine;
  std::function<void(const LassoCheck&)> on_check;
  // Called with every block a round updated (tests check the schedule).
  std::function<void(std::span<const uint32_t> features)> on_round;
};

// The smallest lambda at which every weight is 0.
double LambdaMax(const data::Dataset& d, double l1_ratio, bool intercept);

// Fits every lambda asked for (collective: every rank passes the same data set and options).
// InvalidArgumentError for options outside their range.
std::vector<LassoFit> FitLasso(comm::Context& ctx, const data::Dataset& d, const LassoOptions& o);

// Writes the fits as text, atomically: per lambda a line "lambda L intercept B nonzeros K", then
// K lines "index weight" (LIBSVM's 1-based feature index).
void WriteLassoModel(const std::string& path, const std::vector<LassoFit>& fits);

}  // namespace parasol::apps::lasso
