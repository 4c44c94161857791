// The models `parasol train` trains, built as a list of stages (a stage is a layer or a residual
// block: the unit whose parameters the synchroniser tracks and whose forward may wait for them).
//   mlp       784-1024-1024-10, ReLU (input flattened)
//   lenet     LeNet-5: conv5x5 6, pool, conv5x5 16, pool, fc 120, 84, classes (1x28x28 is padded)
//   resnet20  CIFAR ResNet-20: conv 16, 3 stages of 3 basic blocks (16/32/64 channels, batch norm,
//             zero-padded identity shortcuts), global average pool, fc; any input of 8x8 or more
//   vgg       conv3x3 64, pool, 128, pool, 256, 256, pool, 512, pool, fc 2048-4096-4096-classes
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "parasol/dl/layers.h"
#include "parasol/dl/spatial.h"

namespace parasol::dl {

class Model : public torch::nn::Module {
 public:
  // `spatial`, when not null, splits each example's height over its ranks (spatial.h); it must
  // outlive the model.
  Model(std::string name, std::vector<int64_t> input_shape, SpatialGroup* spatial = nullptr)
      : name_(std::move(name)), input_shape_(std::move(input_shape)), spatial_(spatial) {}

  // Runs the stages in order; before_stage(i), when given, is called before stage i runs (the
  // synchroniser's wait for that stage's parameters). `x` holds whole examples; split over a
  // spatial group, each rank computes on its rows of them and every rank gets the whole output.
  torch::Tensor Forward(torch::Tensor x, const std::function<void(int)>& before_stage = {});

  const std::string& name() const { return name_; }
  const std::vector<int64_t>& input_shape() const { return input_shape_; }  // C, H, W
  int num_stages() const { return static_cast<int>(stages_.size()); }
  std::vector<torch::Tensor> StageParameters(int stage) const { return stages_[stage]->parameters(); }
  std::string StageName(int stage) const { return stage_names_[stage]; }
  // Fully-connected layers with their stage, for sufficient-factor broadcasting.
  const std::vector<std::pair<int, FcLayer>>& fc_layers() const { return fc_layers_; }
  const std::vector<BatchNorm2d>& batch_norms() const { return batch_norms_; }
  SpatialGroup* spatial() const { return spatial_; }

  // Builders' interface.
  void AddStage(const std::string& stage_name, torch::nn::Sequential stage);
  void NoteFc(FcLayer fc) { fc_layers_.emplace_back(num_stages(), std::move(fc)); }
  void NoteBatchNorm(BatchNorm2d bn) { batch_norms_.push_back(std::move(bn)); }

 private:
  std::string name_;
  std::vector<int64_t> input_shape_;
  std::vector<torch::nn::Sequential> stages_;
  std::vector<std::string> stage_names_;
  std::vector<std::pair<int, FcLayer>> fc_layers_;
  std::vector<BatchNorm2d> batch_norms_;
  SpatialGroup* spatial_;
};

// Throws InvalidArgumentError for an unknown name or an input shape the model cannot take.
// Parameters are drawn from torch's generator: seed it first for reproducible models. With
// `spatial` (a group of more than one rank), every example's height is split over its ranks;
// their batch norms need a reducer over the group at least (Model::batch_norms).
std::shared_ptr<Model> MakeModel(const std::string& name, const std::vector<int64_t>& input_shape,
                                 int64_t classes = 10, SpatialGroup* spatial = nullptr);

// The input shape a model is defined for (C, H, W) when the data set does not impose one.
std::vector<int64_t> DefaultInputShape(const std::string& model);

}  // namespace parasol::dl
