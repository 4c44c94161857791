// A graph convolutional network (Kipf and Welling): each layer is Z = A_hat (H W) + b over the
// renormalised adjacency, ReLU and dropout between layers, softmax over the last layer's output.
// Runs on one rank's GraphShard: the dense work (H W) on owned rows only, the graph work (A_hat)
// after the ghost rows are refreshed from their owners, forward and backward alike.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/comm/context.h"

namespace parasol::apps::gnn {

// Which dropout masks a pass draws. A mask entry depends on the seed, the epoch, the layer, the
// vertex's global id and the column only, so every partition of the graph drops the same entries.
struct DropoutDraw {
  float rate = 0;  // 0: no dropout (evaluation)
  uint64_t seed = 0;
  uint64_t epoch = 0;
};

class Gcn {
 public:
  // Layer widths: features -> hidden[0] -> ... -> classes.
  Gcn(size_t features, std::vector<size_t> hidden, size_t classes);

  size_t layers() const { return widths_.size() - 1; }
  size_t in_width(size_t layer) const { return widths_[layer]; }
  size_t out_width(size_t layer) const { return widths_[layer + 1]; }
  // Every layer's weights (in x out, row-major) then bias, layer after layer.
  std::span<float> parameters() { return params_; }
  std::span<const float> parameters() const { return params_; }
  size_t weight_offset(size_t layer) const { return offsets_[layer]; }
  size_t bias_offset(size_t layer) const { return offsets_[layer] + in_width(layer) * out_width(layer); }
  // Glorot-uniform weights drawn from `seed` (the same on every rank), zero biases.
  void InitGlorot(uint64_t seed);

  // The output (owned rows x classes) of the shard's rows; keeps what Backward needs. Every rank
  // calls it together (ghost refreshes).
  void Forward(comm::Context& ctx, const GraphShard& s, const DropoutDraw& dropout);
  std::span<const float> output() const { return z_.back(); }
  // Bytes of ghost rows this rank has sent, forward and backward, since it was made.
  uint64_t ghost_bytes_sent() const { return ghost_bytes_sent_; }

  // The gradient of a loss whose gradient by the last Forward's output is `d_output`, written to
  // `grad` (the layout of parameters()). This rank's share only: sum it over ranks.
  void Backward(comm::Context& ctx, const GraphShard& s, std::span<const float> d_output,
                std::span<float> grad);

 private:
  void Aggregate(const GraphShard& s, size_t width, std::span<const float> in, std::span<float> out) const;

  std::vector<size_t> widths_, offsets_;
  std::vector<float> params_;
  DropoutDraw dropout_;
  uint64_t ghost_bytes_sent_ = 0;
  // Per layer: the input after ReLU and dropout (owned rows; layer 0's input is the sparse
  // features, its dropout drawn again in Backward), T = H W (local rows: ghosts refreshed), and
  // the output Z (owned rows).
  std::vector<std::vector<float>> h_, t_, z_;
  std::vector<float> scratch_, d_ext_, d_t_, d_h_;
};

// Keep (and scale by 1 / (1 - rate)) or drop entry (vertex, column) of layer `layer`'s input.
bool KeepEntry(const DropoutDraw& d, size_t layer, uint64_t vertex, uint64_t column);

}  // namespace parasol::apps::gnn
