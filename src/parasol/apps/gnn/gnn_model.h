// What the trainer needs of a GNN: parameters in one flat array, a forward pass over one rank's
// GraphShard and the backward pass of this rank's share of the gradient. Every rank calls Forward
// and Backward together: they exchange ghost rows with the other ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "parasol/apps/gnn/ghost_exchange.h"
#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/apps/gnn/interval_pipeline.h"
#include "parasol/apps/gnn/layer_ops.h"
#include "parasol/apps/gnn/tensor_ops.h"

namespace parasol::apps::gnn {

class GnnModel {
 public:
  virtual ~GnnModel() = default;

  // "gcn" or "gat".
  virtual std::string_view name() const = 0;
  size_t layers() const { return widths_.size() - 1; }
  size_t in_width(size_t layer) const { return widths_[layer]; }
  size_t out_width(size_t layer) const { return widths_[layer + 1]; }
  // Every layer's parameters, layer after layer: a layer's weights (in x out, row-major), then the
  // model's vectors of `out` values (GCN: the bias; GAT: a_src, a_dst, the bias).
  std::span<float> parameters() { return params_; }
  std::span<const float> parameters() const { return params_; }
  size_t weight_offset(size_t layer) const { return offsets_[layer]; }
  // Glorot-uniform weights drawn from `seed` (the same on every rank), zero biases.
  virtual void InitGlorot(uint64_t seed) = 0;

  // Where the passes run their graph and tensor tasks (Dorylus's computation separation); the
  // pipeline outlives the model's passes. A model may ignore it (GAT runs on the caller's thread).
  virtual void UsePipeline(IntervalPipeline* /*pipeline*/) {}
  // Where the tensor tasks run instead of this process (a tensor worker's client); null: here.
  // Only GCN runs its tensor tasks elsewhere.
  virtual void UseTensorOps(TensorOps* /*ops*/) {}

  // The output (owned rows x classes) of the shard's rows; keeps what Backward needs.
  virtual void Forward(GhostExchange& ghosts, const GraphShard& s, const DropoutDraw& dropout) = 0;
  virtual std::span<const float> output() const = 0;
  // The gradient of a loss whose gradient by the last Forward's output is `d_output`, written to
  // `grad` (the layout of parameters()). This rank's share only: sum it over ranks.
  virtual void Backward(GhostExchange& ghosts, const GraphShard& s, std::span<const float> d_output,
                        std::span<float> grad) = 0;

 protected:
  // Layer widths features -> hidden[0] -> ... -> classes; each layer's parameters are its weights
  // and `vectors` vectors of its output width, all zero.
  GnnModel(size_t features, const std::vector<size_t>& hidden, size_t classes, size_t vectors);

  std::vector<size_t> widths_, offsets_;  // offsets_: where each layer's parameters start
  std::vector<float> params_;
};

// "gcn" or "gat" (InvalidArgumentError otherwise). Layer widths: features -> hidden -> classes.
std::unique_ptr<GnnModel> MakeGnnModel(const std::string& kind, size_t features, std::vector<size_t> hidden,
                                       size_t classes);

// Glorot-uniform draws of a fan_in x fan_out matrix into w from `rng` (the same numbers on every
// platform).
void FillGlorot(std::mt19937_64* rng, size_t fan_in, size_t fan_out, float* w);

}  // namespace parasol::apps::gnn
