#include "parasol/dl/dynamic/level_executor.h"

#include "parasol/core/error.h"

namespace parasol::dl::dynamic {

LevelExecutor::LevelExecutor(VertexProgramImpl& program, LevelExecutorOptions options)
    : program_(program), options_(options) {}

torch::Tensor LevelExecutor::Forward(const Schedule& s, const torch::Tensor& inputs) {
  const bool grad = torch::GradMode::is_enabled();
  schedule_ = &s;
  runs_.clear();
  const int64_t rows = s.vertices + 1, width = program_.projected_size();
  const auto like = inputs.options().requires_grad(false);  // the inputs' type (float; double in tests)
  torch::Tensor buffer = torch::zeros({rows, program_.state_size()}, like);
  torch::Tensor projected;  // without autograd: levels read it as leaves
  // Levels that project their own inputs read them as a leaf, so that one backward at the end
  // goes through the inputs' graph (once, not once per level).
  inputs_ = inputs;
  inputs_leaf_ = options_.hoist_inputs || !grad ? inputs : inputs.detach().requires_grad_(true);
  if (options_.hoist_inputs) {
    projected_ = torch::zeros({rows, width}, like).index_copy(0, s.input_rows, program_.Project(inputs));
    projected = projected_.detach();
  }
  for (const Level& level : s.levels) {
    const int64_t n = level.rows.size(0);
    torch::Tensor children = buffer.index_select(0, level.children).view({n, s.arity, -1});
    torch::Tensor proj;  // undefined: no vertex of the level reads an input
    const bool inputs_here = level.input_indices.numel() > 0;
    if (inputs_here && options_.hoist_inputs) {
      proj = projected.index_select(0, level.rows);
      if (grad) proj.requires_grad_(true);
    } else if (inputs_here) {  // this level's inputs only, with their graph
      proj = torch::zeros({n, width}, like)
                 .index_copy(0, level.input_positions,
                             program_.Project(inputs_leaf_.index_select(0, level.input_indices)));
    }
    if (grad) children.requires_grad_(!level.leaves);
    torch::Tensor states = program_.Combine(proj, children, level.leaves);
    {
      torch::NoGradGuard no_grad;
      buffer.index_copy_(0, level.rows, states.detach());
    }
    if (grad) runs_.push_back({children, proj, states});
  }
  return buffer;
}

void LevelExecutor::Backward(const torch::Tensor& d_states) {
  if (schedule_ == nullptr || runs_.size() != schedule_->levels.size()) {
    throw InternalError("executor backward without a forward under autograd");
  }
  const Schedule& s = *schedule_;
  torch::Tensor grads = d_states.clone();  // children's gradients are added to it level by level
  torch::Tensor d_projected;
  if (options_.hoist_inputs) d_projected = torch::zeros_like(projected_);
  for (size_t l = runs_.size(); l-- > 0;) {
    const Level& level = s.levels[l];
    LevelRun& run = runs_[l];
    torch::autograd::backward({run.states}, {grads.index_select(0, level.rows)});
    torch::NoGradGuard no_grad;
    if (!level.leaves && run.children.grad().defined()) {
      grads.index_add_(0, level.children, run.children.grad().view({level.children.size(0), -1}));
    }
    if (options_.hoist_inputs && run.projected.defined() && run.projected.grad().defined()) {
      d_projected.index_copy_(0, level.rows, run.projected.grad());
    }
  }
  if (options_.hoist_inputs) {
    torch::autograd::backward({projected_}, {d_projected});
  } else if (inputs_.requires_grad() && inputs_leaf_.grad().defined()) {
    torch::autograd::backward({inputs_}, {inputs_leaf_.grad()});
  }
  runs_.clear();
  projected_ = inputs_ = inputs_leaf_ = torch::Tensor();
}

}  // namespace parasol::dl::dynamic
