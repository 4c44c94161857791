// The constituency (N-ary, N = 2) Tree-LSTM cell of Tai, Socher and Manning (2015): the leaves
// read their word x, the inner vertices their two children (h_l, c_l), (h_r, c_r):
//   leaf   i, o, u = W x + b_iou;             c = sigma(i) * tanh(u)
//   inner  i, f_l, f_r, o, u = U [h_l; h_r] + b;  c = sigma(i) tanh(u) + sigma(f_l) c_l + sigma(f_r) c_r
//   both   h = sigma(o) * tanh(c);  the state is [h; c]
// W x is the input-only part (Project); a vertex with both an input and children adds W x to its
// i, o and u gates.
#pragma once

#include "parasol/dl/dynamic/vertex_program.h"

namespace parasol::dl::dynamic {

class TreeLstmCellImpl : public VertexProgramImpl {
 public:
  TreeLstmCellImpl(int64_t input, int64_t hidden);
  int arity() const override { return 2; }
  int64_t input_size() const override { return input_; }
  int64_t projected_size() const override { return 3 * hidden_; }
  int64_t state_size() const override { return 2 * hidden_; }
  int64_t hidden_size() const override { return hidden_; }
  torch::Tensor Project(const torch::Tensor& inputs) override;
  torch::Tensor Combine(const torch::Tensor& projected, const torch::Tensor& children, bool leaves) override;
  torch::Tensor Hidden(const torch::Tensor& states) override { return states.narrow(1, 0, hidden_); }

  torch::Tensor w, u, b;  // [3H, input] (i, o, u), [5H, 2H] (i, f_l, f_r, o, u), [5H]

 private:
  int64_t input_, hidden_;
};
TORCH_MODULE(TreeLstmCell);

}  // namespace parasol::dl::dynamic
