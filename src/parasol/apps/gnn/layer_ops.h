// The tensor operations of a GNN layer (Dorylus's "tensor tasks", as opposed to the graph tasks
// that gather over edges): the dense product of a layer's input with its weights, its gradients,
// and the activation with dropout between layers. Shared by the models; all on owned rows only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/core/flat_map.h"

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
    return (MixKey(base_ ^ ((vertex << 24) + column)) >> 40) >= threshold_;
  }

 private:
  uint64_t base_ = 0, threshold_ = 0;
  bool active_ = false;
};

inline bool KeepEntry(const DropoutDraw& d, size_t layer, uint64_t vertex, uint64_t column) {
  return DropoutMask(d, layer).Keep(vertex, column);
}

enum class Activation { kRelu, kElu };

// Rows [begin, end) of a matrix whose rows are a shard's local rows (owned, then ghosts). The
// functions below read and write only those rows of the matrices they get (whole, row-major), so
// intervals of rows can run as separate tasks.
struct RowRange {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};

// t (out columns) = dropout(features) w on the rows, w: features x out.
void ProjectFeatures(const GraphShard& s, const DropoutDraw& d, const float* w, size_t out, RowRange rows,
                     float* t);
// gw += dropout(features)' dt over the rows, with the mask ProjectFeatures drew.
void ProjectFeaturesBackward(const GraphShard& s, const DropoutDraw& d, const float* dt, size_t out,
                             RowRange rows, float* gw);

// h (in columns) = dropout_layer(act(z)) on the rows (owned rows); `layer` selects the mask.
void ActivateAndDrop(const GraphShard& s, const DropoutDraw& d, size_t layer, Activation act, const float* z,
                     size_t in, RowRange rows, float* h);
// dz = dh through the same dropout and the activation's derivative at z, on the rows.
void ActivateAndDropBackward(const GraphShard& s, const DropoutDraw& d, size_t layer, Activation act,
                             const float* z, const float* dh, size_t in, RowRange rows, float* dz);

// gb (out) += the column sums of dz (n x out): a bias's gradient.
void BiasBackward(const float* dz, size_t n, size_t out, float* gb);

// t (out columns) = h (in columns) w (in x out) on the rows; those rows of t are overwritten.
void Project(const float* h, size_t in, const float* w, size_t out, RowRange rows, float* t);
// gw += h' dt and dh = dt w' on the rows (dh's rows overwritten).
void ProjectBackward(const float* h, size_t in, const float* w, size_t out, const float* dt, RowRange rows,
                     float* gw, float* dh);

}  // namespace parasol::apps::gnn
