// A graph convolutional network (Kipf and Welling): each layer is Z = A_hat (H W) + b over the
// renormalised adjacency, ReLU and dropout between layers, softmax over the last layer's output.
// Runs on one rank's GraphShard, as Dorylus gathers: a ghost's layer input H comes from its owner
// (the first layer's from the ghost's own features: no exchange) and its product with the weights
// is computed here, with this pass's weights, so a stale ghost is stale in its activations only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/gnn/gnn_model.h"
#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/apps/gnn/interval_pipeline.h"
#include "parasol/apps/gnn/tensor_ops.h"

namespace parasol::apps::gnn {

class Gcn : public GnnModel {
 public:
  // Layer widths: features -> hidden[0] -> ... -> classes.
  Gcn(size_t features, std::vector<size_t> hidden, size_t classes);

  std::string_view name() const override { return "gcn"; }
  // A layer's parameters: its weights (in x out, row-major), then its bias.
  size_t bias_offset(size_t layer) const { return offsets_[layer] + in_width(layer) * out_width(layer); }
  void InitGlorot(uint64_t seed) override;

  void UsePipeline(IntervalPipeline* pipeline) override { pipeline_ = pipeline ? pipeline : &inline_; }
  void UseTensorOps(TensorOps* ops) override { remote_ = ops; }
  const LayerShapes& shapes() const { return shapes_; }
  void Forward(GhostExchange& ghosts, const GraphShard& s, const DropoutDraw& dropout) override;
  std::span<const float> output() const override { return z_.back(); }
  void Backward(GhostExchange& ghosts, const GraphShard& s, std::span<const float> d_output,
                std::span<float> grad) override;

 private:
  // out = A_hat in (local rows) on the owned rows in `rows`: the gather over edges.
  void Aggregate(const GraphShard& s, size_t width, RowRange rows, const float* in, float* out) const;
  // out (local rows) = A_hat' in (owned rows): the scatter.
  void AggregateTransposed(const GraphShard& s, size_t width, std::span<const float> in,
                           std::span<float> out) const;
  // Layer l's weight gradient (into gw) and dH of its owned rows (d_h_, l > 0) from dZ (d_ext_).
  // Synchronous ghosts: each owner forms its rows' whole dT from the ghosts' dZ (an exchange per
  // layer, the least arithmetic). Stale ghosts: each rank differentiates the rows it used, ghosts
  // included, and sends the ghosts' dH to their owners: the gradient of the forward pass that ran.
  void BackwardByOwners(GhostExchange& ghosts, TensorOps& ops, const GraphShard& s, size_t l, float* gw);
  void BackwardByLocalRows(GhostExchange& ghosts, TensorOps& ops, const GraphShard& s, size_t l, float* gw);

  LayerShapes shapes_;
  DropoutDraw dropout_;
  // Per layer: the input after ReLU and dropout (local rows, the ghosts' from their owners; layer
  // 0's input is the sparse features, its dropout drawn again in Backward), T = H W (local rows),
  // and the output Z (owned rows).
  std::vector<std::vector<float>> h_, t_, z_;
  std::vector<float> d_ext_, d_t_, d_h_, d_below_;
  IntervalPipeline inline_;  // no pools: every task on the caller's thread
  IntervalPipeline* pipeline_ = &inline_;
  TensorOps* remote_ = nullptr;  // where the tensor tasks run; null: this process
};

}  // namespace parasol::apps::gnn
