// The static vertex function F of a dynamic network (Cavs): written once, as libtorch operations
// on a batch of vertices, and run by the executor over the levels of many graphs at once.
//   Project(inputs)                the part of F that reads only the vertex's own input: the
//                                  executor may batch it over every vertex of a batch at once
//                                  (Cavs's lazy batching), not level by level
//   Combine(projected, children)   the rest: the vertex's projected input (zeros for a vertex
//                                  without one; undefined when no vertex of the call has one) and
//                                  its children's states, gathered into one dense [n, arity,
//                                  state] tensor (an absent child's is zeros), to the state
//   Hidden(states)                 the part of a state the output layer reads
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace parasol::dl::dynamic {

class VertexProgramImpl : public torch::nn::Module {
 public:
  virtual int arity() const = 0;
  virtual int64_t input_size() const = 0;
  virtual int64_t projected_size() const = 0;
  virtual int64_t state_size() const = 0;
  virtual int64_t hidden_size() const = 0;
  virtual torch::Tensor Project(const torch::Tensor& inputs) = 0;  // [m, input] -> [m, projected]
  // `leaves`: no vertex of the batch has a child (their states are zeros, and F may skip them);
  // `projected` undefined: no vertex of the batch has an input.
  virtual torch::Tensor Combine(const torch::Tensor& projected, const torch::Tensor& children,
                                bool leaves) = 0;
  virtual torch::Tensor Hidden(const torch::Tensor& states) = 0;  // [n, state] -> [n, hidden]
};

}  // namespace parasol::dl::dynamic
