#include "parasol/dl/models.h"

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/dl/spatial_layers.h"

namespace parasol::dl {
namespace {

namespace nn = torch::nn;

// CIFAR ResNet basic block: two 3x3 convolutions with batch norm; a shortcut that halves the
// spatial size and zero-pads the new channels when the shape changes (the paper's option A).
class BasicBlockImpl : public nn::Module {
 public:
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride, int64_t height, SpatialGroup* group)
      : conv1_(register_module("conv1", Conv2dLayer(in, out, 3, stride, 1, false, height, group))),
        bn1_(register_module("bn1", BatchNorm2d(out))),
        conv2_(
            register_module("conv2", Conv2dLayer(out, out, 3, 1, 1, false, conv1_->output_height(), group))),
        bn2_(register_module("bn2", BatchNorm2d(out))),
        pad_(out - in),
        stride_(stride),
        height_(height),
        group_(group) {}
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1_(conv1_(x)));
    y = bn2_(conv2_(y));
    torch::Tensor s = x;
    if (stride_ != 1 || pad_ != 0) {
      s = StridedRows(x, stride_, height_, group_).slice(3, 0, std::nullopt, stride_);
      s = torch::constant_pad_nd(s, {0, 0, 0, 0, pad_ / 2, pad_ - pad_ / 2});
    }
    return torch::relu(y + s);
  }
  BatchNorm2d bn1() const { return bn1_; }
  BatchNorm2d bn2() const { return bn2_; }
  int64_t output_height() const { return conv1_->output_height(); }

 private:
  Conv2dLayer conv1_;
  BatchNorm2d bn1_;
  Conv2dLayer conv2_;
  BatchNorm2d bn2_;
  int64_t pad_;
  int64_t stride_;
  int64_t height_;
  SpatialGroup* group_;
};
TORCH_MODULE(BasicBlock);

// A fully-connected stage: optional flatten (of a height-`flatten_height` input split over the
// group; 0: one replicated on every rank), the layer, optional ReLU.
void AddFc(Model& m, const std::string& name, int64_t in, int64_t out, bool flatten, bool relu,
           int64_t flatten_height = 0) {
  FcLayer fc(in, out);
  m.NoteFc(fc);
  nn::Sequential s;
  if (flatten) s->push_back(FlattenLayer(flatten_height, m.spatial()));
  s->push_back(fc);
  if (relu) s->push_back(nn::ReLU());
  m.AddStage(name, s);
}

// A convolution with ReLU and an optional 2x2 max pool; returns the output's height.
int64_t AddConv(Model& m, const std::string& name, int64_t in, int64_t out, int64_t kernel, int64_t padding,
                bool pool, int64_t height) {
  Conv2dLayer conv(in, out, kernel, 1, padding, true, height, m.spatial());
  nn::Sequential s(conv, nn::ReLU());
  int64_t h = conv->output_height();
  if (pool) {
    MaxPool2dLayer max(2, h, m.spatial());
    s->push_back(max);
    h = max->output_height();
  }
  m.AddStage(name, s);
  return h;
}

void BuildMlp(Model& m, int64_t features, int64_t classes) {
  AddFc(m, "fc1", features, 1024, true, true, m.input_shape()[1]);
  AddFc(m, "fc2", 1024, 1024, false, true);
  AddFc(m, "fc3", 1024, classes, false, false);
}

void BuildLenet(Model& m, int64_t channels, int64_t side, int64_t classes) {
  // 28x28 inputs are padded by 2 so the layers see LeNet's 32x32.
  int64_t h = AddConv(m, "conv1", channels, 6, 5, side == 28 ? 2 : 0, true, side);
  h = AddConv(m, "conv2", 6, 16, 5, 0, true, h);
  AddFc(m, "fc1", 16 * 5 * 5, 120, true, true, h);
  AddFc(m, "fc2", 120, 84, false, true);
  AddFc(m, "fc3", 84, classes, false, false);
}

void BuildResnet20(Model& m, int64_t channels, int64_t classes) {
  BatchNorm2d bn(16);
  m.NoteBatchNorm(bn);
  int64_t height = m.input_shape()[1], width = m.input_shape()[2];
  Conv2dLayer conv1(channels, 16, 3, 1, 1, false, height, m.spatial());
  m.AddStage("conv1", nn::Sequential(conv1, bn, nn::ReLU()));
  int64_t in = 16;
  for (int64_t width_out : {16, 32, 64}) {
    for (int b = 0; b < 3; ++b) {
      const int64_t stride = (b == 0 && width_out != 16) ? 2 : 1;
      BasicBlock block(in, width_out, stride, height, m.spatial());
      m.NoteBatchNorm(block->bn1());
      m.NoteBatchNorm(block->bn2());
      m.AddStage(fmt::format("block{}_{}", width_out, b), nn::Sequential(block));
      height = block->output_height();
      width = (width - 1) / stride + 1;
      in = width_out;
    }
  }
  m.AddStage("pool", nn::Sequential(GlobalAvgPool(height, width, m.spatial())));
  AddFc(m, "fc", 64, classes, true, false);
}

void BuildVgg(Model& m, int64_t channels, int64_t classes) {
  int64_t h = AddConv(m, "conv1", channels, 64, 3, 1, true, m.input_shape()[1]);
  h = AddConv(m, "conv2", 64, 128, 3, 1, true, h);
  h = AddConv(m, "conv3", 128, 256, 3, 1, false, h);
  h = AddConv(m, "conv4", 256, 256, 3, 1, true, h);
  h = AddConv(m, "conv5", 256, 512, 3, 1, true, h);
  AddFc(m, "fc1", 512 * 2 * 2, 4096, true, true, h);
  AddFc(m, "fc2", 4096, 4096, false, true);
  AddFc(m, "fc3", 4096, classes, false, false);
}

}  // namespace

void Model::AddStage(const std::string& stage_name, nn::Sequential stage) {
  register_module(stage_name, stage);
  stages_.push_back(std::move(stage));
  stage_names_.push_back(stage_name);
}

torch::Tensor Model::Forward(torch::Tensor x, const std::function<void(int)>& before_stage) {
  if (spatial_ && spatial_->size() > 1) x = spatial_->Local(x);
  for (int i = 0; i < num_stages(); ++i) {
    if (before_stage) before_stage(i);
    x = stages_[i]->forward(x);
  }
  return x;
}

std::vector<int64_t> DefaultInputShape(const std::string& model) {
  if (model == "mlp" || model == "lenet") return {1, 28, 28};
  return {3, 32, 32};
}

std::shared_ptr<Model> MakeModel(const std::string& name, const std::vector<int64_t>& input_shape,
                                 int64_t classes, SpatialGroup* spatial) {
  if (input_shape.size() != 3) throw InvalidArgumentError("model input shape must be C, H, W");
  const int64_t c = input_shape[0], h = input_shape[1], w = input_shape[2];
  auto m = std::make_shared<Model>(name, input_shape, spatial);
  auto need = [&](bool ok, const char* what) {
    if (!ok)
      throw InvalidArgumentError(
          fmt::format("model {} needs {} input, the data is {}x{}x{}", name, what, c, h, w));
  };
  if (name == "mlp") {
    BuildMlp(*m, c * h * w, classes);
  } else if (name == "lenet") {
    need(h == w && (h == 28 || h == 32), "28x28 or 32x32");
    BuildLenet(*m, c, h, classes);
  } else if (name == "resnet20") {
    need(h >= 8 && w >= 8, "at least 8x8");
    BuildResnet20(*m, c, classes);
  } else if (name == "vgg") {
    need(h == 32 && w == 32, "32x32");
    BuildVgg(*m, c, classes);
  } else {
    throw InvalidArgumentError(fmt::format("--model '{}': mlp, lenet, resnet20 or vgg", name));
  }
  return m;
}

}  // namespace parasol::dl
