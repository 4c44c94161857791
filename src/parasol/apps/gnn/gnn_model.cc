#include "parasol/apps/gnn/gnn_model.h"

#include <fmt/format.h>

#include <cmath>

#include "parasol/apps/gnn/gat.h"
#include "parasol/apps/gnn/gcn.h"
#include "parasol/core/error.h"

namespace parasol::apps::gnn {

GnnModel::GnnModel(size_t features, const std::vector<size_t>& hidden, size_t classes, size_t vectors) {
  widths_.push_back(features);
  widths_.insert(widths_.end(), hidden.begin(), hidden.end());
  widths_.push_back(classes);
  size_t total = 0;
  for (size_t l = 0; l < layers(); ++l) {
    offsets_.push_back(total);
    total += (in_width(l) + vectors) * out_width(l);
  }
  params_.assign(total, 0.0f);
}

std::unique_ptr<GnnModel> MakeGnnModel(const std::string& kind, size_t features, std::vector<size_t> hidden,
                                       size_t classes) {
  if (kind == "gcn") return std::make_unique<Gcn>(features, std::move(hidden), classes);
  if (kind == "gat") return std::make_unique<Gat>(features, std::move(hidden), classes);
  throw InvalidArgumentError(fmt::format("unknown model '{}' (gcn or gat)", kind));
}

void FillGlorot(std::mt19937_64* rng, size_t fan_in, size_t fan_out, float* w) {
  const double range = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  for (size_t i = 0; i < fan_in * fan_out; ++i) {
    const double u = static_cast<double>((*rng)() >> 11) * 0x1p-53;  // [0, 1), the same on every platform
    w[i] = static_cast<float>((2 * u - 1) * range);
  }
}

}  // namespace parasol::apps::gnn
