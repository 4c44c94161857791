// Synthetic regression and classification problems with a known sparse truth and features that
// are correlated in blocks: the case where updating correlated coordinates together goes wrong.
#pragma once

#include <cstdint>
#include <vector>

#include "parasol/data/dataset.h"

namespace parasol::data {

struct DesignOptions {
  uint64_t rows = 1000;
  uint32_t cols = 1000;
  // Features come in blocks of this many; within a block every pair has this correlation.
  uint32_t block_size = 10;
  double correlation = 0.5;
  // Blocks present in each row (the rest are zero): cols / block_size for a dense design.
  uint32_t blocks_per_row = 100;
  // Nonzero entries of the true coefficient vector, each +-(1 + |N(0, 1)|) at a random feature.
  uint32_t true_nonzeros = 20;
  double noise = 0.1;     // standard deviation of the label noise (regression)
  bool classify = false;  // labels sign(x.w + noise) in {-1, +1} instead of x.w + noise
  uint64_t seed = 1;
};

struct Design {
  Dataset data;
  std::vector<double> truth;  // cols entries
};

// Throws InvalidArgumentError for sizes that make no design (block larger than cols, ...).
Design GenerateDesign(const DesignOptions& o);

}  // namespace parasol::data
