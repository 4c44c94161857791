// A trained C-SVC: support vectors, their coefficients, one rho per pair of classes and the
// kernel, read and written in LIBSVM's model format, so that LIBSVM's svm-predict reads parasol's
// models and `parasol svm-predict` reads LIBSVM's. Several classes are one-against-one, as LIBSVM:
// a two-class machine per pair of classes, and a vote.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "parasol/apps/svm/kernel.h"
#include "parasol/data/dataset.h"

namespace parasol::apps::svm {

struct SvmModel {
  KernelParams kernel;
  std::vector<double> labels;  // k >= 2 classes
  // One per pair of classes (a, b), a < b, in the order (0,1), (0,2), ..., (0,k-1), (1,2), ...;
  // the pair's decision value sum_s coef_s K(sv_s, x) - rho is positive for class a.
  std::vector<double> rho;
  // The support vectors, grouped by class in label order (their labels are their classes).
  data::Dataset support_vectors;
  std::vector<uint64_t> per_class;
  // coefficients[c][s] (c < k - 1): y a of support vector s (of class q) in the pair of q and
  // class c (c < q) or c + 1 (c >= q); 0 where it is not a support vector of that pair.
  std::vector<std::vector<double>> coefficients;
};

// The classes of a data set in LIBSVM's order: first appearance, except that -1/+1 data puts
// +1 first. InvalidArgumentError when there are fewer than two.
std::vector<double> ClassOrder(const data::Dataset& d);

// A two-class solution for the pair of classes (first, second), first < second: the data set's
// rows of either class, in data order, and their multipliers (y = +1 for `first`).
struct PairSolution {
  size_t first = 0, second = 1;
  std::vector<uint32_t> rows;
  std::vector<double> alpha;
  double rho = 0;
};

// The model of the pairs' solutions (every pair of `labels`, in the order of SvmModel::rho).
SvmModel AssembleModel(const data::Dataset& d, std::vector<double> labels,
                       std::span<const PairSolution> pairs, const KernelParams& kernel);

// Atomically; IoError when the file cannot be written.
void WriteSvmModel(const std::string& path, const SvmModel& m);
// ParseError "path:line: what is wrong" for anything but a C-SVC model of a known kernel whose
// counts agree with its lines.
SvmModel ReadSvmModel(const std::string& path);

// Each pair's decision value for rows [begin, end) of `d` (all by default): row begin + r's at
// r * pairs + p.
std::vector<double> DecisionValues(const SvmModel& m, const data::Dataset& d, size_t begin = 0,
                                   size_t end = SIZE_MAX);
// Each of those rows' class by the pairs' votes (ties go to the class listed first).
std::vector<double> Predict(const SvmModel& m, const data::Dataset& d, size_t begin = 0,
                            size_t end = SIZE_MAX);

}  // namespace parasol::apps::svm
