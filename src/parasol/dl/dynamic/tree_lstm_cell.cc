#include "parasol/dl/dynamic/tree_lstm_cell.h"

#include <cmath>

namespace parasol::dl::dynamic {

TreeLstmCellImpl::TreeLstmCellImpl(int64_t input, int64_t hidden) : input_(input), hidden_(hidden) {
  // Uniform in +-1/sqrt(H), as torch's LSTM.
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden));
  w = register_parameter("w", torch::empty({3 * hidden, input}).uniform_(-k, k));
  u = register_parameter("u", torch::empty({5 * hidden, 2 * hidden}).uniform_(-k, k));
  b = register_parameter("b", torch::empty({5 * hidden}).uniform_(-k, k));
}

torch::Tensor TreeLstmCellImpl::Project(const torch::Tensor& inputs) { return torch::matmul(inputs, w.t()); }

torch::Tensor TreeLstmCellImpl::Combine(const torch::Tensor& projected, const torch::Tensor& children,
                                        bool leaves) {
  const int64_t h = hidden_, n = children.size(0);
  const std::vector<torch::Tensor> bias = b.split_with_sizes({h, 2 * h, h, h});  // i, f_l f_r, o, u
  if (leaves) {  // i, o, u from the input alone
    const std::vector<torch::Tensor> g = projected.split(h, 1);
    const torch::Tensor c = torch::sigmoid(g[0] + bias[0]) * torch::tanh(g[2] + bias[3]);
    return torch::cat({torch::sigmoid(g[1] + bias[2]) * torch::tanh(c), c}, 1);
  }
  // The [n, 2, 2H] children as their h and c parts ([n, 2, H] each), by one unbind.
  const std::vector<torch::Tensor> hc = children.view({n, 2, 2, h}).unbind(2);
  // One split (its backward one concatenation) rather than a slice per gate.
  std::vector<torch::Tensor> g =
      torch::addmm(b, hc[0].reshape({n, 2 * h}), u.t()).split_with_sizes({h, 2 * h, h, h}, 1);
  if (projected.defined()) {  // inner vertices with an input of their own
    const std::vector<torch::Tensor> x = projected.split(h, 1);
    g[0] = g[0] + x[0];
    g[2] = g[2] + x[1];
    g[3] = g[3] + x[2];
  }
  const torch::Tensor c =
      torch::sigmoid(g[0]) * torch::tanh(g[3]) + (torch::sigmoid(g[1]).view({n, 2, h}) * hc[1]).sum(1);
  return torch::cat({torch::sigmoid(g[2]) * torch::tanh(c), c}, 1);
}

}  // namespace parasol::dl::dynamic
