#include "parasol/dl/dynamic/dynamic_net.h"

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/dl/dynamic/lstm_cell.h"
#include "parasol/dl/dynamic/tree_fc_cell.h"
#include "parasol/dl/dynamic/tree_lstm_cell.h"

namespace parasol::dl::dynamic {

DynamicNetImpl::DynamicNetImpl(const DynamicNetOptions& o) {
  if (o.vocab < 1 || o.embedding < 1 || o.hidden < 1 || o.classes < 1) {
    throw InvalidArgumentError("dynamic network: vocabulary, embedding, hidden and classes must be positive");
  }
  embedding = register_module("embedding", torch::nn::Embedding(o.vocab, o.embedding));
  {
    torch::NoGradGuard no_grad;
    embedding->weight.uniform_(-0.05, 0.05);
  }
  if (o.cell == "tree-lstm") {
    program_ = register_module("cell", TreeLstmCell(o.embedding, o.hidden));
  } else if (o.cell == "lstm-lm") {
    program_ = register_module("cell", LstmCell(o.embedding, o.hidden));
  } else if (o.cell == "tree-fc") {
    program_ = register_module("cell", TreeFcCell(o.embedding, o.hidden));
  } else {
    throw InvalidArgumentError(
        fmt::format("unknown dynamic network '{}' (tree-lstm, lstm-lm, tree-fc)", o.cell));
  }
  if (o.dropout < 0 || o.dropout >= 1)
    throw InvalidArgumentError(fmt::format("dropout {} is not in [0, 1)", o.dropout));
  dropout_ = o.dropout;
  generator_ = at::make_generator<at::CPUGeneratorImpl>(0);
  output = register_module("output", torch::nn::Linear(o.hidden, o.classes));
  executor_ = std::make_unique<LevelExecutor>(*program_);
}

std::pair<torch::Tensor, torch::Tensor> DynamicNetImpl::Forward(const Schedule& s) {
  const torch::Tensor inputs = embedding(s.input_tokens);
  torch::Tensor states = executor_->Forward(s, inputs);
  if (torch::GradMode::is_enabled()) states.requires_grad_(true);
  states_ = states;
  labelled_ = (s.labels >= 0).nonzero().squeeze(1);
  const torch::Tensor hidden = program_->Hidden(states.index_select(0, labelled_));
  torch::Tensor kept = hidden;
  if (is_training() && dropout_ > 0) {
    const torch::Tensor keep = torch::empty_like(hidden).bernoulli_(1 - dropout_, generator_);
    kept = hidden * keep * (1 / (1 - dropout_));
  }
  return {output(kept), s.labels.index_select(0, labelled_)};
}

void DynamicNetImpl::SeedDropout(uint64_t seed) { generator_.set_current_seed(seed); }

void DynamicNetImpl::Backward() {
  if (!states_.defined() || !states_.grad().defined())
    throw InternalError("dynamic network backward before loss.backward()");
  executor_->Backward(states_.grad());
  states_ = torch::Tensor();
}

torch::Tensor DynamicNetImpl::RootLogits(const Schedule& s, const torch::Tensor& logits) const {
  // Position of each root among the labelled rows (every root is labelled).
  const torch::Tensor at = torch::searchsorted(labelled_, s.roots);
  return logits.index_select(0, at);
}

torch::Tensor DynamicNetImpl::forward(const torch::Tensor&) {
  throw InternalError("a dynamic network runs through DynamicNet::Forward(schedule)");
}

}  // namespace parasol::dl::dynamic
