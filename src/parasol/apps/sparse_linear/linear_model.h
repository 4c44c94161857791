// The model file of `parasol lasso --model` and `parasol logreg --model`, read by
// `parasol linear-predict`: one fit per lambda of the path, in the data's units.
//
// Text, one record per line:
//   # parasol lasso model: ...          (or "logreg": the first line names the kind)
//   labels NEG POS                      (logreg only: the label values of classes -1 and +1)
//   lambda L intercept B nonzeros K     (then K lines of "feature weight", features from 1)
// A prediction is B + sum of weight x feature; for logreg the class is POS when that margin is
// positive, with probability 1 / (1 + exp(-margin)).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "parasol/data/dataset.h"

namespace parasol::apps::sparse_linear {

struct LinearModel {
  struct Fit {
    double lambda = 0;
    double intercept = 0;
    std::vector<std::pair<uint32_t, double>> weights;  // (feature id from 0, weight), nonzeros only
  };
  bool logistic = false;
  double negative_label = -1, positive_label = 1;  // logistic only
  std::vector<Fit> fits;                           // in the path's order

  // The fit whose lambda is nearest `lambda` (the last of the path when lambda < 0).
  const Fit& Choose(double lambda) const;
  static double Margin(const Fit& fit, const data::Dataset& d, size_t row);
};

// How well a fit does on labelled rows: lasso the mean squared error and R^2, logreg the accuracy.
struct LinearScore {
  double mse = 0, r2 = 0;  // lasso
  double accuracy = 0;     // logreg
};
LinearScore Score(const LinearModel& model, const LinearModel::Fit& fit, const data::Dataset& d);

// Atomic: IoError naming the file when it cannot be written.
void WriteLinearModel(const std::string& path, const LinearModel& model);
// IoError when unreadable; ParseError "path:line: what" for a malformed line.
LinearModel ReadLinearModel(const std::string& path);

}  // namespace parasol::apps::sparse_linear
