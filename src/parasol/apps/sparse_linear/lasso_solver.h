// Lasso and elastic net by model-parallel coordinate descent on the STRADS round engine:
// scheduled blocks of coordinates whose columns are not correlated are updated together, each
// worker (a thread of a rank) holding a slice of the samples and their residuals.
//
// The objective is scikit-learn's, so results compare directly:
//   (1/2n) ||y - Xw - b||^2 + lambda l1_ratio ||w||_1 + lambda (1 - l1_ratio)/2 ||w||^2
// with an unpenalised intercept b (unless intercept is off). The intercept is handled by
// centring, implicitly: sparse columns stay sparse, and the residual carries one shared offset.
#pragma once

#include <vector>

#include "parasol/apps/sparse_linear/fit_path.h"
#include "parasol/comm/context.h"
#include "parasol/data/dataset.h"

namespace parasol::apps::sparse_linear {

// The smallest lambda at which every weight is 0.
double LassoLambdaMax(const data::Dataset& d, double l1_ratio, bool intercept);

// Fits every lambda asked for (collective: every rank passes the same data set and options).
// InvalidArgumentError for options outside their range.
std::vector<LinearFit> FitLasso(comm::Context& ctx, const data::Dataset& d, const PathOptions& o);

}  // namespace parasol::apps::sparse_linear
