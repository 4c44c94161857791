#include "parasol/apps/gnn/tensor_ops.h"

namespace parasol::apps::gnn {

void LocalTensorOps::ProjectFeatures(const DropoutDraw& d, RowRange rows, float* t) {
  gnn::ProjectFeatures(s_, d, weights(0), shapes_.out(0), rows, t);
}

void LocalTensorOps::ActivateProject(const DropoutDraw& d, size_t l, const float* z, RowRange rows, float* h,
                                     float* t) {
  ActivateAndDrop(s_, d, l, Activation::kRelu, z, shapes_.in(l), rows, h);
  gnn::Project(h, shapes_.in(l), weights(l), shapes_.out(l), rows, t);
}

void LocalTensorOps::Project(size_t l, const float* h, RowRange rows, float* t) {
  gnn::Project(h, shapes_.in(l), weights(l), shapes_.out(l), rows, t);
}

void LocalTensorOps::BackwardRows(const DropoutDraw& d, size_t l, const float* dt, const float* h,
                                  RowRange rows, float* gw, float* dh) {
  if (l == 0) {
    ProjectFeaturesBackward(s_, d, dt, shapes_.out(0), rows, gw);
  } else {
    ProjectBackward(h, shapes_.in(l), weights(l), shapes_.out(l), dt, rows, gw, dh);
  }
}

void LocalTensorOps::ActivateBackward(const DropoutDraw& d, size_t l, const float* z, const float* dh,
                                      RowRange rows, float* dz) {
  ActivateAndDropBackward(s_, d, l, Activation::kRelu, z, dh, shapes_.in(l), rows, dz);
}

}  // namespace parasol::apps::gnn
