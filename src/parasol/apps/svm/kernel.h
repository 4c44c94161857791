// Kernel functions of support vector machines over the rows of a data set, evaluated a column at
// a time: K(x_i, x_t) for one row i against many rows t, which is what SMO asks for.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "parasol/data/dataset.h"

namespace parasol::apps::svm {

enum class KernelType { kLinear, kPolynomial, kRbf, kSigmoid };

// "linear", "poly" or "polynomial", "rbf", "sigmoid"; InvalidArgumentError otherwise.
KernelType ParseKernelType(std::string_view name);
// LIBSVM's names (as its model files write them): linear, polynomial, rbf, sigmoid.
std::string_view KernelName(KernelType type);

// LIBSVM's parametrisation: linear x.z; polynomial (gamma x.z + coef0)^degree;
// rbf exp(-gamma |x - z|^2); sigmoid tanh(gamma x.z + coef0).
struct KernelParams {
  KernelType type = KernelType::kRbf;
  double gamma = 0;
  double coef0 = 0;
  int degree = 3;
};

// The rows of a data set, held for kernel evaluations: each row's features renumbered densely
// (the features that occur, so a column costs a gather per nonzero instead of a merge of two
// sparse rows) and its squared norm.
//
// Threading: const methods may run concurrently, each caller with its own Scratch.
class KernelMatrix {
 public:
  // A dense copy of one row to evaluate against others; reused between calls.
  struct Scratch {
    std::vector<double> dense;
    std::vector<double> dots;
  };

  KernelMatrix(const data::Dataset& d, KernelParams params);

  size_t rows() const { return norms_.size(); }
  const KernelParams& params() const { return params_; }
  // K(x_i, x_i).
  double Diagonal(size_t i) const { return FromDot(norms_[i], norms_[i], norms_[i]); }

  // out[k] = K(x_i, x_rows[k]) for every k.
  void Column(size_t i, std::span<const uint32_t> rows, float* out, Scratch& scratch) const;
  // out[k] = K(x, x_rows[k]) for a row x given by its (0-based, ascending) feature ids and values,
  // which may name features no row here has.
  void Column(std::span<const uint32_t> ids, std::span<const double> values, std::span<const uint32_t> rows,
              double* out, Scratch& scratch) const;

  // The kernel of two vectors whose dot product and squared norms are given.
  double FromDot(double dot, double norm_a, double norm_b) const;

 private:
  // Fills scratch.dots[k] with x_rows[k] . (the row in scratch.dense).
  void Dots(std::span<const uint32_t> rows, Scratch& scratch) const;
  template <typename Id, bool kOnes>
  void DotsOf(const Id* ids, std::span<const uint32_t> rows, Scratch& scratch) const;
  template <typename Out>
  void Finish(double norm, std::span<const uint32_t> rows, const Scratch& scratch, Out* out) const;

  KernelParams params_;
  std::vector<uint32_t> feature_ids_;  // dense id -> the data set's feature id, ascending
  // A column streams through every row's entries, so they are kept small: 16-bit ids when the
  // features allow, and no values when every value is 1 (binary features, common in LIBSVM's
  // sets), which makes a9a's rows 28 bytes instead of 168.
  std::vector<uint64_t> offsets_;
  std::vector<uint32_t> dense_ids_;
  std::vector<uint16_t> short_ids_;  // dense_ids_ narrowed, when there are at most 65,536 features
  std::vector<double> values_;
  bool all_ones_ = true;
  std::vector<double> norms_;  // |x_i|^2
};

}  // namespace parasol::apps::svm
