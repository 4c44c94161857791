// The LSTM cell over chains (a variable-length sequence is a chain graph: each vertex's one child
// is the position before it): i, f, o, g = W x + U h_prev + b; c = sigma(f) c_prev +
// sigma(i) tanh(g), h = sigma(o) tanh(c). State [h; c]. W x is the input-only part (Project), so
// the executor batches it over every position of every sequence at once.
#pragma once

#include "parasol/dl/dynamic/vertex_program.h"

namespace parasol::dl::dynamic {

class LstmCellImpl : public VertexProgramImpl {
 public:
  LstmCellImpl(int64_t input, int64_t hidden);
  int arity() const override { return 1; }
  int64_t input_size() const override { return input_; }
  int64_t projected_size() const override { return 4 * hidden_; }
  int64_t state_size() const override { return 2 * hidden_; }
  int64_t hidden_size() const override { return hidden_; }
  torch::Tensor Project(const torch::Tensor& inputs) override { return torch::matmul(inputs, w.t()); }
  torch::Tensor Combine(const torch::Tensor& projected, const torch::Tensor& children, bool leaves) override;
  torch::Tensor Hidden(const torch::Tensor& states) override { return states.narrow(1, 0, hidden_); }

  torch::Tensor w, u, b;  // [4H, input], [4H, H], [4H]

 private:
  int64_t input_, hidden_;
};
TORCH_MODULE(LstmCell);

}  // namespace parasol::dl::dynamic
