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
    throw InvalidArgumentError(fmt::format("unknown dynamic network '{}' (tree-lstm, lstm-lm, tree-fc)", o.cell));
  }
  dropout_ = register_module("dropout", torch::nn::Dropout(o.dropout));
  output = register_module("output", torch::nn::Linear(o.hidden, o.classes));
  executor_ = std::make_unique<Executor>(*program_);
}

std::pair<torch::Tensor, torch::Tensor> DynamicNetImpl::Forward(const Schedule& s) {
  const torch::Tensor inputs = embedding(s.input_tokens);
  torch::Tensor states = executor_->Forward(s, inputs);
  if (torch::GradMode::is_enabled()) states.requires_grad_(true);
  states_ = states;
  labelled_ = (s.labels >= 0).nonzero().squeeze(1);
  const torch::Tensor hidden = program_->Hidden(states.index_select(0, labelled_));
  return {output(dropout_(hidden)), s.labels.index_select(0, labelled_)};
}

void DynamicNetImpl::Backward() {
  if (!states_.defined() || !states_.grad().defined()) throw InternalError("dynamic network backward before loss.backward()");
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
