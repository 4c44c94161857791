#include "parasol/dl/models.h"

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::dl {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = 0,
                bool bias = true) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(bias));
}

// CIFAR ResNet basic block: two 3x3 convolutions with batch norm; a shortcut that halves the
// spatial size and zero-pads the new channels when the shape changes (the paper's option A).
class BasicBlockImpl : public nn::Module {
 public:
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module("conv1", Conv(in, out, 3, stride, 1, false))),
        bn1_(register_module("bn1", BatchNorm2d(out))),
        conv2_(register_module("conv2", Conv(out, out, 3, 1, 1, false))),
        bn2_(register_module("bn2", BatchNorm2d(out))),
        pad_(out - in),
        stride_(stride) {}
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(bn1_(conv1_(x)));
    y = bn2_(conv2_(y));
    torch::Tensor s = x;
    if (stride_ != 1 || pad_ != 0) {
      s = x.index({torch::indexing::Slice(), torch::indexing::Slice(),
                   torch::indexing::Slice(0, torch::indexing::None, stride_),
                   torch::indexing::Slice(0, torch::indexing::None, stride_)});
      s = torch::constant_pad_nd(s, {0, 0, 0, 0, pad_ / 2, pad_ - pad_ / 2});
    }
    return torch::relu(y + s);
  }
  BatchNorm2d bn1() const { return bn1_; }
  BatchNorm2d bn2() const { return bn2_; }

 private:
  nn::Conv2d conv1_;
  BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  BatchNorm2d bn2_;
  int64_t pad_;
  int64_t stride_;
};
TORCH_MODULE(BasicBlock);

// A fully-connected stage: optional flatten, the layer, optional ReLU.
void AddFc(Model& m, const std::string& name, int64_t in, int64_t out, bool flatten, bool relu) {
  FcLayer fc(in, out);
  m.NoteFc(fc);
  nn::Sequential s;
  if (flatten) s->push_back(nn::Flatten());
  s->push_back(fc);
  if (relu) s->push_back(nn::ReLU());
  m.AddStage(name, s);
}

void AddConv(Model& m, const std::string& name, int64_t in, int64_t out, int64_t kernel, int64_t padding,
             bool pool) {
  nn::Sequential s(Conv(in, out, kernel, 1, padding), nn::ReLU());
  if (pool) s->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2)));
  m.AddStage(name, s);
}

void BuildMlp(Model& m, int64_t features, int64_t classes) {
  AddFc(m, "fc1", features, 1024, true, true);
  AddFc(m, "fc2", 1024, 1024, false, true);
  AddFc(m, "fc3", 1024, classes, false, false);
}

void BuildLenet(Model& m, int64_t channels, int64_t side, int64_t classes) {
  // 28x28 inputs are padded by 2 so the layers see LeNet's 32x32.
  AddConv(m, "conv1", channels, 6, 5, side == 28 ? 2 : 0, true);
  AddConv(m, "conv2", 6, 16, 5, 0, true);
  AddFc(m, "fc1", 16 * 5 * 5, 120, true, true);
  AddFc(m, "fc2", 120, 84, false, true);
  AddFc(m, "fc3", 84, classes, false, false);
}

void BuildResnet20(Model& m, int64_t channels, int64_t classes) {
  BatchNorm2d bn(16);
  m.NoteBatchNorm(bn);
  m.AddStage("conv1", nn::Sequential(Conv(channels, 16, 3, 1, 1, false), bn, nn::ReLU()));
  int64_t in = 16;
  for (int64_t width : {16, 32, 64}) {
    for (int b = 0; b < 3; ++b) {
      const int64_t stride = (b == 0 && width != 16) ? 2 : 1;
      BasicBlock block(in, width, stride);
      m.NoteBatchNorm(block->bn1());
      m.NoteBatchNorm(block->bn2());
      m.AddStage(fmt::format("block{}_{}", width, b), nn::Sequential(block));
      in = width;
    }
  }
  m.AddStage("pool", nn::Sequential(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1))));
  AddFc(m, "fc", 64, classes, true, false);
}

void BuildVgg(Model& m, int64_t channels, int64_t classes) {
  AddConv(m, "conv1", channels, 64, 3, 1, true);
  AddConv(m, "conv2", 64, 128, 3, 1, true);
  AddConv(m, "conv3", 128, 256, 3, 1, false);
  AddConv(m, "conv4", 256, 256, 3, 1, true);
  AddConv(m, "conv5", 256, 512, 3, 1, true);
  AddFc(m, "fc1", 512 * 2 * 2, 4096, true, true);
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
                                 int64_t classes) {
  if (input_shape.size() != 3) throw InvalidArgumentError("model input shape must be C, H, W");
  const int64_t c = input_shape[0], h = input_shape[1], w = input_shape[2];
  auto m = std::make_shared<Model>(name, input_shape);
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
    need(h == 32 && w == 32, "32x32");
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
