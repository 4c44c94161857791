// Cavs's synthetic benchmark cell: a fully-connected layer over complete binary trees,
// h = tanh(W x + U [h_l; h_r] + b) (leaves read x, inner vertices their children).
#pragma once

#include "parasol/dl/dynamic/vertex_program.h"

namespace parasol::dl::dynamic {

class TreeFcCellImpl : public VertexProgramImpl {
 public:
  TreeFcCellImpl(int64_t input, int64_t hidden);
  int arity() const override { return 2; }
  int64_t input_size() const override { return input_; }
  int64_t projected_size() const override { return hidden_; }
  int64_t state_size() const override { return hidden_; }
  int64_t hidden_size() const override { return hidden_; }
  torch::Tensor Project(const torch::Tensor& inputs) override { return torch::matmul(inputs, w.t()); }
  torch::Tensor Combine(const torch::Tensor& projected, const torch::Tensor& children, bool leaves) override {
    torch::Tensor pre = projected.defined() ? projected + b : b.expand({children.size(0), hidden_});
    if (!leaves) pre = torch::addmm(pre, children.reshape({children.size(0), 2 * hidden_}), u.t());
    return torch::tanh(pre);
  }
  torch::Tensor Hidden(const torch::Tensor& states) override { return states; }

  torch::Tensor w, u, b;  // [H, input], [H, 2H], [H]

 private:
  int64_t input_, hidden_;
};
TORCH_MODULE(TreeFcCell);

}  // namespace parasol::dl::dynamic
