#include "parasol/dl/spatial_layers.h"

#include <optional>

#include <ATen/ATen.h>

#include "parasol/dl/autograd_handle.h"

namespace parasol::dl {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool Split(const SpatialGroup* group) { return group != nullptr && group->size() > 1; }

// A convolution of a window's joined rows (WindowHalo) with no padding along the height, saving
// this rank's rows and the halo instead of the joined input (formed again in backward). One node
// of the graph on every rank, exchange included, so every rank's backward runs the same
// collectives in the same order. `bias` is empty when there is none (autograd functions take no
// undefined tensor).
class HaloConvFunction : public torch::autograd::Function<HaloConvFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& local, const torch::Tensor& weight,
                               const torch::Tensor& bias, std::vector<int64_t> geometry) {
    const WindowHalo halo = Halo(geometry);
    const auto [top, bottom] = halo.Exchange(local);
    ctx->save_for_backward({local, weight});
    ctx->saved_data["top"] = top;
    ctx->saved_data["bottom"] = bottom;
    ctx->saved_data["geometry"] = geometry;
    ctx->saved_data["bias"] = bias.numel() > 0;
    const int64_t stride = geometry[2], padding = geometry[3];
    const std::vector<int64_t> strides{stride, stride}, paddings{0, padding};
    return torch::conv2d(halo.Join(top, local, bottom), weight, bias.numel() > 0 ? bias : torch::Tensor(),
                         strides, paddings);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &local = saved[0], &weight = saved[1];
    const std::vector<int64_t> geometry = ctx->saved_data["geometry"].toIntVector();
    const WindowHalo halo = Halo(geometry);
    const bool has_bias = ctx->saved_data["bias"].toBool(), input_grad = ctx->needs_input_grad(0);
    const torch::Tensor joined =
        halo.Join(ctx->saved_data["top"].toTensor(), local, ctx->saved_data["bottom"].toTensor());
    const std::vector<int64_t> bias_sizes{weight.size(0)};
    auto [grad_in, grad_w, grad_b] = at::convolution_backward(
        grad_outputs[0].contiguous(), joined, weight,
        has_bias ? at::OptionalIntArrayRef(bias_sizes) : at::OptionalIntArrayRef(),
        {geometry[2], geometry[2]}, {0, geometry[3]}, {1, 1}, false, {0, 0}, 1, {input_grad, true, has_bias});
    // Whether the input needs a gradient is the same on every rank: so are the collectives.
    return {input_grad ? halo.ReturnGradient(grad_in, local.size(2)) : torch::Tensor(), grad_w,
            has_bias ? grad_b : torch::Tensor(), torch::Tensor()};
  }

 private:
  // geometry: height, kernel, stride, padding, the group's handle.
  static WindowHalo Halo(const std::vector<int64_t>& g) {
    return WindowHalo(g[0], {g[1], g[2], g[3]}, *FromHandle<SpatialGroup>(g[4]));
  }
};

}  // namespace

Conv2dLayerImpl::Conv2dLayerImpl(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                                 bool with_bias, int64_t height, SpatialGroup* group)
    : window_{kernel, stride, padding}, height_(height), group_(group) {
  // torch's own layer draws the initial values, so a model is the one torch would build.
  torch::nn::Conv2d init(torch::nn::Conv2dOptions(in, out, kernel).bias(with_bias));
  weight = register_parameter("weight", init->weight.detach().clone());
  if (with_bias) bias = register_parameter("bias", init->bias.detach().clone());
}

torch::Tensor Conv2dLayerImpl::forward(const torch::Tensor& x) {
  const int64_t s = window_.stride, p = window_.padding;
  if (!Split(group_)) return torch::conv2d(x, weight, bias, {s, s}, {p, p});
  return HaloConvFunction::apply(x, weight, bias.defined() ? bias : torch::empty({0}, weight.options()),
                                 std::vector<int64_t>{height_, window_.kernel, s, p, AsHandle(group_)});
}

MaxPool2dLayerImpl::MaxPool2dLayerImpl(int64_t kernel, int64_t height, SpatialGroup* group)
    : window_{kernel, kernel, 0}, height_(height), group_(group) {}

torch::Tensor MaxPool2dLayerImpl::forward(const torch::Tensor& x) {
  const int64_t k = window_.kernel;
  if (!Split(group_)) return torch::max_pool2d(x, {k, k}, {k, k});
  return torch::max_pool2d(WindowRows(x, height_, window_, *group_), {k, k}, {k, k});
}

torch::Tensor StridedRows(const torch::Tensor& x, int64_t stride, int64_t height, SpatialGroup* group) {
  const torch::Tensor rows = Split(group) ? WindowRows(x, height, {1, stride, 0}, *group) : x;
  return rows.slice(2, 0, std::nullopt, stride);
}

GlobalAvgPoolImpl::GlobalAvgPoolImpl(int64_t height, int64_t width, SpatialGroup* group)
    : height_(height), width_(width), group_(group) {}

torch::Tensor GlobalAvgPoolImpl::forward(const torch::Tensor& x) {
  if (!Split(group_)) return x.mean({2, 3}, true);
  return SumOverGroup(x.sum({2, 3}, true) / static_cast<double>(height_ * width_), *group_);
}

FlattenLayerImpl::FlattenLayerImpl(int64_t height, SpatialGroup* group) : height_(height), group_(group) {}

torch::Tensor FlattenLayerImpl::forward(const torch::Tensor& x) {
  if (height_ == 0 || !Split(group_)) return x.flatten(1);
  return GatherAllRows(x, height_, *group_).flatten(1);
}

}  // namespace parasol::dl
