// The layers of the convolutional models, written so that one example's rows may be split over a
// spatial group (spatial.h): without a group (or with a group of one) each is the plain torch layer.
// Each is told the height of its input (the whole example's, not a rank's rows) when it is built.
//
// Threading: a layer runs on the thread of its model's forward and backward.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "parasol/dl/spatial.h"

namespace parasol::dl {

// A 2-D convolution. Split over a group, it saves only its own rows and the halo for backward (the
// joined input is formed again there), so a rank's activations stay its share of the example's.
class Conv2dLayerImpl : public torch::nn::Module {
 public:
  // Weights and bias drawn as torch's Conv2d draws them. `group` may be null; it must outlive the
  // layer.
  Conv2dLayerImpl(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding, bool with_bias,
                  int64_t height, SpatialGroup* group);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t output_height() const { return WindowOutputHeight(height_, window_); }

  torch::Tensor weight;
  torch::Tensor bias;  // undefined without one

 private:
  Window window_;
  int64_t height_;
  SpatialGroup* group_;
};
TORCH_MODULE(Conv2dLayer);

// Max pooling, kernel = stride, no padding.
class MaxPool2dLayerImpl : public torch::nn::Module {
 public:
  MaxPool2dLayerImpl(int64_t kernel, int64_t height, SpatialGroup* group);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t output_height() const { return WindowOutputHeight(height_, window_); }

 private:
  Window window_;
  int64_t height_;
  SpatialGroup* group_;
};
TORCH_MODULE(MaxPool2dLayer);

// Every row of every rank's rows at stride `stride` from the first (a strided shortcut).
torch::Tensor StridedRows(const torch::Tensor& x, int64_t stride, int64_t height, SpatialGroup* group);

// The mean over the height and width, N x C x 1 x 1 on every rank of the group.
class GlobalAvgPoolImpl : public torch::nn::Module {
 public:
  GlobalAvgPoolImpl(int64_t height, int64_t width, SpatialGroup* group);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int64_t height_, width_;
  SpatialGroup* group_;
};
TORCH_MODULE(GlobalAvgPool);

// N x (C H W), the whole example's rows gathered on every rank of the group first.
class FlattenLayerImpl : public torch::nn::Module {
 public:
  // height 0: the input is not split (it is the same on every rank).
  FlattenLayerImpl(int64_t height, SpatialGroup* group);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int64_t height_;
  SpatialGroup* group_;
};
TORCH_MODULE(FlattenLayer);

}  // namespace parasol::dl
