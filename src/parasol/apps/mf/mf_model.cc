#include "parasol/apps/mf/mf_model.h"

#include <cmath>

#include "parasol/core/error.h"
#include "parasol/core/section_file.h"

namespace parasol::apps::mf {

constexpr std::string_view kKind = "mf-model";

double MfModel::Predict(uint32_t user, uint32_t item) const {
  if (user >= users || item >= items) return mean;
  const float* u = user_factors.data() + static_cast<size_t>(user) * rank;
  const float* v = item_factors.data() + static_cast<size_t>(item) * rank;
  double dot = 0;
  for (uint32_t f = 0; f < rank; ++f) dot += static_cast<double>(u[f]) * v[f];
  return mean + dot;
}

double Rmse(const MfModel& model, const RatingSet& ratings) {
  if (ratings.ratings.empty()) return 0;
  double sum = 0;
  for (const Rating& r : ratings.ratings) {
    const double e = r.value - model.Predict(r.user, r.item);
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(ratings.ratings.size()));
}

void WriteMfModel(FileSystem& fs, const std::string& path, const MfModel& model) {
  SectionWriter w(kKind);
  w.AddValue("rank", model.rank);
  w.AddValue("users", model.users);
  w.AddValue("items", model.items);
  w.AddValue("mean", model.mean);
  w.Add("user_factors", model.user_factors);
  w.Add("item_factors", model.item_factors);
  w.Write(fs, path);
}

MfModel ReadMfModel(const std::string& path) {
  const SectionReader r(path, kKind);
  MfModel m;
  m.rank = r.GetValue<uint32_t>("rank");
  m.users = r.GetValue<uint64_t>("users");
  m.items = r.GetValue<uint64_t>("items");
  m.mean = r.GetValue<double>("mean");
  if (m.rank == 0) throw ParseError(path, 0, "rank 0");
  // The counts are checked against the sections' (bounded by the file's size) before any read.
  if (r.Count("user_factors") / m.rank != m.users || r.Count("user_factors") % m.rank != 0 ||
      r.Count("item_factors") / m.rank != m.items || r.Count("item_factors") % m.rank != 0) {
    throw ParseError(path, 0, "the factor sections do not hold users x rank and items x rank values");
  }
  m.user_factors = r.Get<float>("user_factors");
  m.item_factors = r.Get<float>("item_factors");
  return m;
}

}  // namespace parasol::apps::mf
