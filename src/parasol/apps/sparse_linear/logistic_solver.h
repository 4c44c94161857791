// Sparse (L1-penalised) logistic regression by model-parallel coordinate descent on the STRADS
// round engine: each scheduled coordinate takes a proximal Newton step from its gradient and
// curvature in the quadratic model of the loss at the last gap check, summed over the workers'
// slices of the samples, which hold their margins; each check searches along the step for a
// decrease (LIBLINEAR's newGLMNET).
//
// The objective is scikit-learn's (LogisticRegression with C = 1 / (n lambda)), so results
// compare directly:
//   (1/n) sum_i log(1 + exp(-y_i (x_i.w + b))) + lambda l1_ratio ||w||_1
//     + lambda (1 - l1_ratio)/2 ||w||^2
// with labels y in {-1, +1} (any two label values: the smaller is -1) and an unpenalised
// intercept b (unless intercept is off), which is one more scheduled coordinate.
#pragma once

#include <vector>

#include "parasol/apps/sparse_linear/fit_path.h"
#include "parasol/comm/context.h"
#include "parasol/data/dataset.h"

namespace parasol::apps::sparse_linear {

// The data set's labels as -1 / +1. InvalidArgumentError unless there are exactly two values.
std::vector<double> BinaryLabels(const data::Dataset& d);

// The smallest lambda at which every weight is 0.
double LogisticLambdaMax(const data::Dataset& d, double l1_ratio, bool intercept);

// Fits every lambda asked for (collective: every rank passes the same data set and options).
// InvalidArgumentError for options outside their range or labels that are not two classes.
std::vector<LinearFit> FitLogistic(comm::Context& ctx, const data::Dataset& d, const PathOptions& o);

}  // namespace parasol::apps::sparse_linear
