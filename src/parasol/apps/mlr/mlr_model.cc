#include "parasol/apps/mlr/mlr_model.h"

#include <algorithm>

#include "parasol/core/error.h"
#include "parasol/core/flat_map.h"
#include "parasol/core/section_file.h"

namespace parasol::apps::mlr {

std::vector<double> MlrModel::Predict(const data::Dataset& d) const {
  const size_t k = classes.size();
  // A feature's weight row by hashing: a binary search per nonzero was most of an evaluation.
  FlatMap<uint32_t> row_of;
  row_of.Reserve(features.size());
  for (size_t i = 0; i < features.size(); ++i) row_of[features[i]] = static_cast<uint32_t>(i);
  std::vector<double> out, scores(k);
  out.reserve(d.rows());
  for (size_t r = 0; r < d.rows(); ++r) {
    scores = biases;
    auto ids = d.row_indices(r);
    auto vals = d.row_values(r);
    for (size_t e = 0; e < ids.size(); ++e) {
      const uint32_t* row = row_of.Find(ids[e]);
      if (row == nullptr) continue;
      const double* w = weights.data() + size_t{*row} * k;
      for (size_t c = 0; c < k; ++c) scores[c] += w[c] * vals[e];
    }
    out.push_back(
        classes[static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin())]);
  }
  return out;
}

constexpr std::string_view kKind = "mlr-model";

void WriteMlrModel(FileSystem& fs, const std::string& path, const MlrModel& model) {
  SectionWriter w(kKind);
  w.Add("classes", model.classes);
  w.Add("features", model.features);
  w.Add("weights", model.weights);
  w.Add("biases", model.biases);
  w.Write(fs, path);
}

MlrModel ReadMlrModel(const std::string& path) {
  const SectionReader r(path, kKind);
  MlrModel m;
  m.classes = r.Get<double>("classes");
  m.features = r.Get<uint32_t>("features");
  const uint64_t k = m.classes.size();
  if (k < 2) throw ParseError(path, 0, "fewer than two classes");
  if (!std::is_sorted(m.features.begin(), m.features.end()) ||
      !std::is_sorted(m.classes.begin(), m.classes.end()))
    throw ParseError(path, 0, "classes and features must ascend");
  m.weights = r.Get<double>("weights", m.features.size() * k);  // a ParseError unless exactly that many
  m.biases = r.Get<double>("biases", k);
  return m;
}

}  // namespace parasol::apps::mlr
