#include "parasol/apps/svm/kernel.h"

#include <algorithm>
#include <cmath>

#include "parasol/core/enum_names.h"

namespace parasol::apps::svm {

// "polynomial" is LIBSVM's model files' name; "poly" the shorter spelling users type.
constexpr EnumName<KernelType> kKernelNames[] = {{KernelType::kLinear, "linear"},
                                                 {KernelType::kPolynomial, "polynomial"},
                                                 {KernelType::kPolynomial, "poly"},
                                                 {KernelType::kRbf, "rbf"},
                                                 {KernelType::kSigmoid, "sigmoid"}};

KernelType ParseKernelType(std::string_view name) { return ParseName(kKernelNames, name, "kernel"); }

std::string_view KernelName(KernelType type) { return NameOf(kKernelNames, type); }

KernelMatrix::KernelMatrix(const data::Dataset& d, KernelParams params)
    : params_(params), feature_ids_(data::UsedFeatures(d)) {
  offsets_.reserve(d.rows() + 1);
  offsets_.push_back(0);
  dense_ids_.reserve(d.nonzeros());
  values_.reserve(d.nonzeros());
  norms_.reserve(d.rows());
  for (size_t r = 0; r < d.rows(); ++r) {
    double norm = 0;
    auto ids = d.row_indices(r);
    auto vals = d.row_values(r);
    for (size_t k = 0; k < ids.size(); ++k) {
      auto it = std::lower_bound(feature_ids_.begin(), feature_ids_.end(), ids[k]);
      dense_ids_.push_back(static_cast<uint32_t>(it - feature_ids_.begin()));
      values_.push_back(vals[k]);
      all_ones_ = all_ones_ && vals[k] == 1.0;
      norm += vals[k] * vals[k];
    }
    offsets_.push_back(dense_ids_.size());
    norms_.push_back(norm);
  }
  if (feature_ids_.size() <= 65536) short_ids_.assign(dense_ids_.begin(), dense_ids_.end());
}

double KernelMatrix::FromDot(double dot, double norm_a, double norm_b) const {
  switch (params_.type) {
    case KernelType::kLinear: return dot;
    case KernelType::kPolynomial: return std::pow(params_.gamma * dot + params_.coef0, params_.degree);
    case KernelType::kRbf: return std::exp(-params_.gamma * (norm_a + norm_b - 2 * dot));
    case KernelType::kSigmoid: return std::tanh(params_.gamma * dot + params_.coef0);
  }
  return 0;
}

template <typename Id, bool kOnes>
void KernelMatrix::DotsOf(const Id* ids, std::span<const uint32_t> rows, Scratch& scratch) const {
  scratch.dots.resize(rows.size());
  const double* dense = scratch.dense.data();
  const double* vals = values_.data();
  auto term = [&](uint64_t e) { return kOnes ? dense[ids[e]] : dense[ids[e]] * vals[e]; };
  for (size_t k = 0; k < rows.size(); ++k) {
    uint64_t e = offsets_[rows[k]];
    const uint64_t end = offsets_[rows[k] + 1];
    // Four partial sums: one chain of dependent additions per row was the column's critical path.
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; e + 4 <= end; e += 4) {
      s0 += term(e);
      s1 += term(e + 1);
      s2 += term(e + 2);
      s3 += term(e + 3);
    }
    for (; e < end; ++e) s0 += term(e);
    scratch.dots[k] = (s0 + s1) + (s2 + s3);
  }
}

void KernelMatrix::Dots(std::span<const uint32_t> rows, Scratch& scratch) const {
  if (!short_ids_.empty()) {
    if (all_ones_)
      DotsOf<uint16_t, true>(short_ids_.data(), rows, scratch);
    else
      DotsOf<uint16_t, false>(short_ids_.data(), rows, scratch);
  } else {
    if (all_ones_)
      DotsOf<uint32_t, true>(dense_ids_.data(), rows, scratch);
    else
      DotsOf<uint32_t, false>(dense_ids_.data(), rows, scratch);
  }
}

template <typename Out>
void KernelMatrix::Finish(double norm, std::span<const uint32_t> rows, const Scratch& scratch,
                          Out* out) const {
  const double* dots = scratch.dots.data();
  const double g = params_.gamma;
  switch (params_.type) {
    case KernelType::kRbf:
      // One loop per kernel type, so that the compiler sees a plain loop of exp.
      for (size_t k = 0; k < rows.size(); ++k)
        out[k] = static_cast<Out>(std::exp(-g * (norm + norms_[rows[k]] - 2 * dots[k])));
      break;
    case KernelType::kLinear:
      for (size_t k = 0; k < rows.size(); ++k) out[k] = static_cast<Out>(dots[k]);
      break;
    default:
      for (size_t k = 0; k < rows.size(); ++k)
        out[k] = static_cast<Out>(FromDot(dots[k], norm, norms_[rows[k]]));
  }
}

// scratch.dense stays all zeros between calls (each call clears what it set): a column costs its
// row's nonzeros, not the number of features.
void KernelMatrix::Column(size_t i, std::span<const uint32_t> rows, float* out, Scratch& scratch) const {
  if (scratch.dense.size() != feature_ids_.size()) scratch.dense.assign(feature_ids_.size(), 0.0);
  for (uint64_t e = offsets_[i]; e < offsets_[i + 1]; ++e) scratch.dense[dense_ids_[e]] = values_[e];
  Dots(rows, scratch);
  for (uint64_t e = offsets_[i]; e < offsets_[i + 1]; ++e) scratch.dense[dense_ids_[e]] = 0;
  Finish(norms_[i], rows, scratch, out);
}

void KernelMatrix::Column(std::span<const uint32_t> ids, std::span<const double> values,
                          std::span<const uint32_t> rows, double* out, Scratch& scratch) const {
  if (scratch.dense.size() != feature_ids_.size()) scratch.dense.assign(feature_ids_.size(), 0.0);
  double norm = 0;
  std::vector<size_t> set;
  for (size_t k = 0; k < ids.size(); ++k) {
    norm += values[k] * values[k];
    auto it = std::lower_bound(feature_ids_.begin(), feature_ids_.end(), ids[k]);
    if (it == feature_ids_.end() || *it != ids[k]) continue;  // no row here has it: adds 0 to dots
    set.push_back(static_cast<size_t>(it - feature_ids_.begin()));
    scratch.dense[set.back()] = values[k];
  }
  Dots(rows, scratch);
  for (size_t s : set) scratch.dense[s] = 0;
  Finish(norm, rows, scratch, out);
}

}  // namespace parasol::apps::svm
