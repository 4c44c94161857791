// A graph attention network (Velickovic et al.), one attention head per layer: with T = H W,
//   e_ij = LeakyReLU_0.2(a_dst . T_i + a_src . T_j) over j in N(i) and i itself,
//   alpha_ij = softmax over j of e_ij,  Z_i = sum_j alpha_ij T_j + b,
// ELU and dropout between layers, dropout (the same rate) on the attention coefficients too, as the
// paper. Graph-parallel like Gcn: T's ghost rows are refreshed from their owners before the
// attention, and in the backward pass the gradients that reach ghost rows (dT_j, and the score
// a_src . T_j's) are sent back to the owners and summed there, since attention is not symmetric.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/gnn/gnn_model.h"

namespace parasol::apps::gnn {

class Gat : public GnnModel {
 public:
  // Layer widths: features -> hidden[0] -> ... -> classes.
  Gat(size_t features, std::vector<size_t> hidden, size_t classes);

  std::string_view name() const override { return "gat"; }
  // A layer's parameters: W (in x out, row-major), a_src, a_dst, bias (out each).
  size_t attention_offset(size_t layer) const { return offsets_[layer] + in_width(layer) * out_width(layer); }
  size_t bias_offset(size_t layer) const { return attention_offset(layer) + 2 * out_width(layer); }
  void InitGlorot(uint64_t seed) override;

  void Forward(GhostExchange& ghosts, const GraphShard& s, const DropoutDraw& dropout) override;
  std::span<const float> output() const override { return layers_.back().z; }
  void Backward(GhostExchange& ghosts, const GraphShard& s, std::span<const float> d_output,
                std::span<float> grad) override;

 private:
  // What a layer's forward pass keeps for its backward pass.
  struct LayerState {
    std::vector<float> h;      // input after ELU and dropout (owned rows; unused in layer 0)
    std::vector<float> t;      // H W, local rows (ghosts refreshed)
    std::vector<float> score;  // a_src . T_j for local rows j
    std::vector<float> self;   // a_dst . T_i for owned rows i
    std::vector<float> alpha;  // attention per adjacency entry, before dropout
    std::vector<float> z;      // output, owned rows
  };
  // Attention and the weighted sum of layer l (T already refreshed).
  void Attend(const GraphShard& s, size_t l);
  // dT (and the gradients of a_src, a_dst) from dZ = d_ext_ of layer l into d_t_.
  void AttendBackward(GhostExchange& ghosts, const GraphShard& s, size_t l, float* grad);
  // The dropout factor of adjacency entry k of owned row i: 0, or 1 / (1 - rate).
  float AttentionKeep(const GraphShard& s, size_t l, size_t i, uint64_t k) const;

  DropoutDraw dropout_;
  std::vector<LayerState> layers_;
  std::vector<float> d_ext_, d_t_, d_h_, d_local_, d_alpha_;
};

}  // namespace parasol::apps::gnn
