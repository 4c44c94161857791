// A trained two-class SVM: support vectors, their coefficients, rho and the kernel, read and
// written in LIBSVM's model format, so that LIBSVM's svm-predict reads parasol's models and
// `parasol svm-predict` reads LIBSVM's.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "parasol/apps/svm/kernel.h"
#include "parasol/data/dataset.h"

namespace parasol::apps::svm {

struct SvmModel {
  KernelParams kernel;
  // labels[0] is the class of positive decision values (y = +1 in training: the class of the
  // first sample, as LIBSVM orders classes).
  std::array<double, 2> labels{};
  double rho = 0;
  // The support vectors, grouped by class in label order; their coefficients y_t a_t.
  data::Dataset support_vectors;
  std::vector<double> coefficients;
  size_t class_count(int c) const;
};

// The two classes of a data set's labels, in order of first appearance, and y = +1 for the first
// class, -1 for the second. InvalidArgumentError when there are not exactly two.
std::array<double, 2> TwoClasses(const data::Dataset& d, std::vector<int8_t>* y);

// The model of multipliers `alpha` (one per sample of d) found with labels y.
SvmModel MakeModel(const data::Dataset& d, const std::array<double, 2>& labels, std::span<const int8_t> y,
                   std::span<const double> alpha, double rho, const KernelParams& kernel);

// Atomically; IoError when the file cannot be written.
void WriteSvmModel(const std::string& path, const SvmModel& m);
// ParseError "path:line: what is wrong" for anything but a two-class C-SVC model of a known
// kernel whose counts agree with its lines.
SvmModel ReadSvmModel(const std::string& path);

// sum_t coef_t K(sv_t, x) - rho for each row x of `d`.
std::vector<double> DecisionValues(const SvmModel& m, const data::Dataset& d);

}  // namespace parasol::apps::svm
