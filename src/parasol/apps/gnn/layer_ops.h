// The tensor operations of a GNN layer (Dorylus's "tensor tasks", as opposed to the graph tasks
// that gather over edges): the dense product of a layer's input with its weights, its gradients,
// and the activation with dropout between layers. Shared by the models; all on owned rows only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/ps/flat_map.h"

namespace parasol::apps::gnn {

// Which dropout masks a pass draws. A mask entry depends on the seed, the epoch, the layer, the
// vertex's global id and the column only, so every partition of the graph drops the same entries.
struct DropoutDraw {
  float rate = 0;  // 0: no dropout (evaluation)
  uint64_t seed = 0;
  uint64_t epoch = 0;
};

// The mask of one layer's input in one pass: Keep (and scale by 1 / (1 - rate)) or drop entry
// (vertex, column). The draw's part of the hash is computed once, here.
class DropoutMask {
 public:
  DropoutMask(const DropoutDraw& d, size_t layer);
  bool active() const { return active_; }
  bool Keep(uint64_t vertex, uint64_t column) const {
    // The top 24 bits of the hash as a fraction in [0, 1), kept if at least the rate.
    return (ps::MixKey(base_ ^ ((vertex << 24) + column)) >> 40) >= threshold_;
  }

 private:
  uint64_t base_ = 0, threshold_ = 0;
  bool active_ = false;
};

inline bool KeepEntry(const DropoutDraw& d, size_t layer, uint64_t vertex, uint64_t column) {
  return DropoutMask(d, layer).Keep(vertex, column);
}

enum class Activation { kRelu, kElu };

// t (rows of `out`, the first `rows` local rows written: owned.size() or local_rows()) =
// dropout(features) w, w: features x out.
void ProjectFeatures(const GraphShard& s, const DropoutDraw& d, const float* w, size_t out, float* t,
                     size_t rows);
// gw += dropout(features)' dt over the first `rows` local rows, with the mask ProjectFeatures drew.
void ProjectFeaturesBackward(const GraphShard& s, const DropoutDraw& d, const float* dt, size_t out, float* gw,
                             size_t rows);

// h (n x in, or more rows, the first n written) = dropout_layer(act(z)) for the owned rows; `layer`
// selects the mask.
void ActivateAndDrop(const GraphShard& s, const DropoutDraw& d, size_t layer, Activation act,
                     std::span<const float> z, size_t in, std::vector<float>* h);
// dz = dh through the same dropout and the activation's derivative at z.
void ActivateAndDropBackward(const GraphShard& s, const DropoutDraw& d, size_t layer, Activation act,
                             std::span<const float> z, std::span<const float> dh, size_t in,
                             std::vector<float>* dz);

// gb (out) += the column sums of dz (n x out): a bias's gradient.
void BiasBackward(const float* dz, size_t n, size_t out, float* gb);

// t (n x out) = h (n x in) w (in x out); rows of t are overwritten.
void Project(std::span<const float> h, size_t n, size_t in, const float* w, size_t out, float* t);
// gw += h' dt and dh = dt w' (n x in).
void ProjectBackward(std::span<const float> h, size_t n, size_t in, const float* w, size_t out,
                     const float* dt, float* gw, std::vector<float>* dh);

}  // namespace parasol::apps::gnn
