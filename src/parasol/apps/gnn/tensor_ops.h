// The tensor tasks of a GCN's passes (Dorylus's "apply vertex" and its gradient), on rows of a
// shard's matrices: what a graph rank does itself (LocalTensorOps) or sends to a tensor worker of
// its own (RemoteTensorOps, tensor_worker.h), Dorylus's cheap serverless threads. Matrices are
// whole (local rows, row-major); a call reads and writes only the rows it is given, so calls on
// different intervals may run at once.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/apps/gnn/layer_ops.h"

namespace parasol::apps::gnn {

// A GCN's layer widths (features, hidden..., classes) and where each layer's weights start in its
// parameters (weights in x out, then the bias).
struct LayerShapes {
  std::vector<size_t> widths, offsets;
  size_t layers() const { return widths.size() - 1; }
  size_t in(size_t l) const { return widths[l]; }
  size_t out(size_t l) const { return widths[l + 1]; }
};

class TensorOps {
 public:
  virtual ~TensorOps() = default;

  // The parameters the calls until the next SetParameters use (every layer's, as the model's).
  virtual void SetParameters(std::span<const float> params) = 0;
  // t = dropout(features) W_0 on the rows.
  virtual void ProjectFeatures(const DropoutDraw& d, RowRange rows, float* t) = 0;
  // h = dropout_l(relu(z)) and t = h W_l on the rows (owned): layer l's input from the output of
  // layer l - 1 (z: in(l) columns, bias added).
  virtual void ActivateProject(const DropoutDraw& d, size_t l, const float* z, RowRange rows, float* h,
                               float* t) = 0;
  // t = h W_l on the rows.
  virtual void Project(size_t l, const float* h, RowRange rows, float* t) = 0;
  // gw (in(l) x out(l), zeroed by the caller) += h' dt on the rows, and dh = dt W_l' (l > 0); for
  // layer 0 h is the dropped-out features and dh is not formed.
  virtual void BackwardRows(const DropoutDraw& d, size_t l, const float* dt, const float* h, RowRange rows,
                            float* gw, float* dh) = 0;
  // dz = dh through dropout_l and ReLU at z (layer l's input back to layer l - 1's output).
  virtual void ActivateBackward(const DropoutDraw& d, size_t l, const float* z, const float* dh,
                                RowRange rows, float* dz) = 0;
};

// The tasks on this process's cores.
class LocalTensorOps : public TensorOps {
 public:
  // The shard and shapes outlive this object.
  LocalTensorOps(const GraphShard& s, const LayerShapes& shapes) : s_(s), shapes_(shapes) {}

  void SetParameters(std::span<const float> params) override { params_ = params; }
  void ProjectFeatures(const DropoutDraw& d, RowRange rows, float* t) override;
  void ActivateProject(const DropoutDraw& d, size_t l, const float* z, RowRange rows, float* h,
                       float* t) override;
  void Project(size_t l, const float* h, RowRange rows, float* t) override;
  void BackwardRows(const DropoutDraw& d, size_t l, const float* dt, const float* h, RowRange rows, float* gw,
                    float* dh) override;
  void ActivateBackward(const DropoutDraw& d, size_t l, const float* z, const float* dh, RowRange rows,
                        float* dz) override;

 private:
  const float* weights(size_t l) const { return params_.data() + shapes_.offsets[l]; }

  const GraphShard& s_;
  const LayerShapes& shapes_;
  std::span<const float> params_;
};

}  // namespace parasol::apps::gnn
