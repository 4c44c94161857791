#include "parasol/dl/dynamic/tree_fc_cell.h"

#include <cmath>

namespace parasol::dl::dynamic {

TreeFcCellImpl::TreeFcCellImpl(int64_t input, int64_t hidden) : input_(input), hidden_(hidden) {
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden));
  w = register_parameter("w", torch::empty({hidden, input}).uniform_(-k, k));
  u = register_parameter("u", torch::empty({hidden, 2 * hidden}).uniform_(-k, k));
  b = register_parameter("b", torch::empty({hidden}).uniform_(-k, k));
}

}  // namespace parasol::dl::dynamic
