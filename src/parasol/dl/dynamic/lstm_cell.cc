#include "parasol/dl/dynamic/lstm_cell.h"

#include <cmath>

namespace parasol::dl::dynamic {

LstmCellImpl::LstmCellImpl(int64_t input, int64_t hidden) : input_(input), hidden_(hidden) {
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden));
  w = register_parameter("w", torch::empty({4 * hidden, input}).uniform_(-k, k));
  u = register_parameter("u", torch::empty({4 * hidden, hidden}).uniform_(-k, k));
  b = register_parameter("b", torch::empty({4 * hidden}).uniform_(-k, k));
}

torch::Tensor LstmCellImpl::Combine(const torch::Tensor& projected, const torch::Tensor& children,
                                    bool leaves) {
  const int64_t h = hidden_, n = children.size(0);
  torch::Tensor gates = projected.defined() ? projected + b : b.expand({n, 4 * h});
  torch::Tensor c_prev;
  if (!leaves) {
    const std::vector<torch::Tensor> hc = children.view({n, 2, h}).unbind(1);  // the one child's h, c
    gates = torch::addmm(gates, hc[0], u.t());
    c_prev = hc[1];
  }
  const std::vector<torch::Tensor> g = gates.chunk(4, 1);  // i, f, o, g
  torch::Tensor c = torch::sigmoid(g[0]) * torch::tanh(g[3]);
  if (!leaves) c = c + torch::sigmoid(g[1]) * c_prev;
  return torch::cat({torch::sigmoid(g[2]) * torch::tanh(c), c}, 1);
}

}  // namespace parasol::dl::dynamic
