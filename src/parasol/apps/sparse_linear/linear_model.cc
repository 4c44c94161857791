#include "parasol/apps/sparse_linear/linear_model.h"

#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::sparse_linear {

const LinearModel::Fit& LinearModel::Choose(double lambda) const {
  if (lambda < 0) return fits.back();
  size_t best = 0;
  for (size_t i = 1; i < fits.size(); ++i) {
    if (std::abs(std::log(fits[i].lambda / lambda)) < std::abs(std::log(fits[best].lambda / lambda)))
      best = i;
  }
  return fits[best];
}

double LinearModel::Margin(const Fit& fit, const data::Dataset& d, size_t row) {
  // Both ascending by feature: one merge.
  const auto ids = d.row_indices(row);
  const auto values = d.row_values(row);
  double m = fit.intercept;
  size_t w = 0;
  for (size_t e = 0; e < ids.size(); ++e) {
    while (w < fit.weights.size() && fit.weights[w].first < ids[e]) ++w;
    if (w < fit.weights.size() && fit.weights[w].first == ids[e]) m += fit.weights[w].second * values[e];
  }
  return m;
}

LinearScore Score(const LinearModel& model, const LinearModel::Fit& fit, const data::Dataset& d) {
  LinearScore s;
  if (d.rows() == 0) return s;
  double mean = 0;
  for (double y : d.labels) mean += y;
  mean /= static_cast<double>(d.rows());
  double squared = 0, total = 0, correct = 0;
  for (size_t r = 0; r < d.rows(); ++r) {
    const double m = LinearModel::Margin(fit, d, r);
    squared += (d.labels[r] - m) * (d.labels[r] - m);
    total += (d.labels[r] - mean) * (d.labels[r] - mean);
    correct += (m > 0 ? model.positive_label : model.negative_label) == d.labels[r];
  }
  const double n = static_cast<double>(d.rows());
  s.mse = squared / n;
  s.r2 = total > 0 ? 1 - squared / total : 0;
  s.accuracy = correct / n;
  return s;
}

void WriteLinearModel(const std::string& path, const LinearModel& model) {
  WriteFileAtomically(path, [&](std::ostream& out) {
    out << "# parasol " << (model.logistic ? "logreg" : "lasso")
        << " model: per lambda, its line and then 'feature weight' (features from 1)\n";
    if (model.logistic)
      out << fmt::format("labels {:.17g} {:.17g}\n", model.negative_label, model.positive_label);
    for (const LinearModel::Fit& f : model.fits) {
      out << fmt::format("lambda {:.17g} intercept {:.17g} nonzeros {}\n", f.lambda, f.intercept,
                         f.weights.size());
      for (const auto& [id, w] : f.weights) out << fmt::format("{} {:.17g}\n", id + uint64_t{1}, w);
    }
  });
}

namespace {

// "KEY VALUE KEY VALUE ...": the values, each checked against its expected key.
std::vector<std::string> Pairs(const LineReader& in, std::string_view line,
                               std::initializer_list<std::string_view> keys) {
  const std::vector<std::string> f = SplitWords(line);
  if (f.size() != 2 * keys.size()) in.Fail(fmt::format("expected '{} ...'", *keys.begin()));
  std::vector<std::string> values;
  size_t i = 0;
  for (std::string_view key : keys) {
    if (f[i] != key) in.Fail(fmt::format("expected '{}', found '{}'", key, f[i]));
    values.push_back(f[i + 1]);
    i += 2;
  }
  return values;
}

}  // namespace

LinearModel ReadLinearModel(const std::string& path) {
  LineReader in(path);
  std::string_view line;
  LinearModel m;
  if (!in.Next(&line)) in.Fail("empty: not a parasol lasso or logreg model");
  if (line.starts_with("# parasol logreg model")) {
    m.logistic = true;
  } else if (!line.starts_with("# parasol lasso model")) {
    in.Fail("not a parasol lasso or logreg model (its first line names the kind)");
  }
  uint64_t left = 0;  // weight lines the current fit still has
  while (in.Next(&line)) {
    if (left > 0) {
      const std::vector<std::string> f = SplitWords(line);
      if (f.size() != 2) in.Fail("expected 'feature weight'");
      const uint32_t id = in.NumberIn<uint32_t>(f[0], "feature", 1, std::numeric_limits<uint32_t>::max());
      auto& weights = m.fits.back().weights;
      if (!weights.empty() && id - 1 <= weights.back().first) in.Fail("features must ascend");
      weights.emplace_back(id - 1, in.Number<double>(f[1], "weight"));
      --left;
    } else if (line.starts_with("labels") && m.logistic && m.fits.empty()) {
      const std::vector<std::string> f = SplitWords(line);
      if (f.size() != 3) in.Fail("expected 'labels NEG POS'");
      m.negative_label = in.Number<double>(f[1], "label");
      m.positive_label = in.Number<double>(f[2], "label");
    } else {
      const auto v = Pairs(in, line, {"lambda", "intercept", "nonzeros"});
      // Bounded by the file: a weight line takes 4 bytes at least.
      left = in.NumberIn<uint64_t>(v[2], "nonzeros", 0, in.file_size_bytes() / 4);
      m.fits.push_back(
          {.lambda = in.Number<double>(v[0], "lambda"), .intercept = in.Number<double>(v[1], "intercept")});
      m.fits.back().weights.reserve(left);
    }
  }
  if (left > 0) in.Fail(fmt::format("the file ends {} weight lines early", left));
  if (m.fits.empty()) in.Fail("no fit in the model");
  return m;
}

}  // namespace parasol::apps::sparse_linear
