#include "parasol/data/design_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "parasol/core/error.h"

namespace parasol::data {

namespace {

void Check(const DesignOptions& o) {
  if (o.rows == 0 || o.cols == 0 || o.block_size == 0 || o.cols % o.block_size != 0) {
    throw InvalidArgumentError(
        fmt::format("design {} x {}: the columns must be a positive multiple of the "
                    "block size {}",
                    o.rows, o.cols, o.block_size));
  }
  const uint32_t blocks = o.cols / o.block_size;
  if (o.blocks_per_row == 0 || o.blocks_per_row > blocks) {
    throw InvalidArgumentError(
        fmt::format("design: {} blocks per row, of {} blocks", o.blocks_per_row, blocks));
  }
  if (!(o.correlation >= 0 && o.correlation < 1))
    throw InvalidArgumentError("design: correlation must be in [0, 1)");
  if (o.true_nonzeros > o.cols) throw InvalidArgumentError("design: more true nonzeros than columns");
  if (!(o.noise >= 0)) throw InvalidArgumentError("design: noise must be at least 0");
}

}  // namespace

Design GenerateDesign(const DesignOptions& o) {
  Check(o);
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Design out;
  out.truth.assign(o.cols, 0.0);
  std::vector<uint32_t> order(o.cols);
  for (uint32_t j = 0; j < o.cols; ++j) order[j] = j;
  for (uint32_t i = 0; i < o.true_nonzeros; ++i) {  // a partial Fisher-Yates shuffle
    std::swap(order[i], order[i + rng() % (o.cols - i)]);
    const double size = 1 + std::abs(normal(rng));
    out.truth[order[i]] = rng() % 2 ? size : -size;
  }
  const uint32_t blocks = o.cols / o.block_size;
  std::vector<uint32_t> chosen(blocks);
  for (uint32_t b = 0; b < blocks; ++b) chosen[b] = b;
  const double shared = std::sqrt(o.correlation), own = std::sqrt(1 - o.correlation);
  std::vector<uint32_t> ids;
  std::vector<double> vals;
  for (uint64_t r = 0; r < o.rows; ++r) {
    for (uint32_t i = 0; i < o.blocks_per_row; ++i) std::swap(chosen[i], chosen[i + rng() % (blocks - i)]);
    std::sort(chosen.begin(), chosen.begin() + o.blocks_per_row);
    ids.clear();
    vals.clear();
    double dot = 0;
    for (uint32_t i = 0; i < o.blocks_per_row; ++i) {
      const double common = normal(rng);  // shared by the block's features in this row
      for (uint32_t k = 0; k < o.block_size; ++k) {
        const uint32_t j = chosen[i] * o.block_size + k;
        const double v = shared * common + own * normal(rng);
        ids.push_back(j);
        vals.push_back(v);
        dot += v * out.truth[j];
      }
    }
    const double y = dot + o.noise * normal(rng);
    out.data.AddRow(o.classify ? (y >= 0 ? 1.0 : -1.0) : y, ids, vals);
  }
  out.data.cols = o.cols;
  return out;
}

}  // namespace parasol::data
