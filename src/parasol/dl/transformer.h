// A decoder-only Transformer language model (GPT-2's layout): token and learned position
// embeddings; pre-norm blocks of causal multi-head self-attention and a feed-forward layer (or a
// mixture of experts in every moe_every-th block), each added to the residual stream; a final
// layer norm; the output layer tied to the token embedding.
//
// Built as a `Model` of stages (embedding, blocks, head) for the data-parallel synchroniser, with
// tensor parallelism over the tensor group (attention heads, the feed-forward width and the
// vocabulary split; the head's output is this rank's block of the vocabulary's logits) and the
// experts spread over the expert group. Weights ~ N(0, 0.02), the residual outputs' scaled by
// 1 / sqrt(2 layers); the values do not depend on the tensor- or expert-parallel degree.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "parasol/dl/models.h"
#include "parasol/dl/moe.h"
#include "parasol/dl/parallel_groups.h"
#include "parasol/dl/tensor_parallel.h"

namespace parasol::dl {

struct TransformerOptions {
  int64_t vocab = 0;
  int64_t layers = 4;
  int64_t d_model = 128;
  int64_t heads = 4;
  int64_t ffn = 512;        // feed-forward width (each expert's, in a mixture-of-experts block)
  int64_t seq = 128;        // longest sequence (position embeddings)
  int64_t moe_experts = 0;  // 0: every block dense
  int64_t moe_every = 1;    // blocks moe_every - 1, 2 moe_every - 1, ... are mixtures of experts
  int64_t moe_top_k = 2;
  double capacity_factor = 1.25;
  double eval_capacity_factor = 2.0;
};

struct TransformerLm {
  // Declared first, destroyed last: the model's layers hold a reference to it.
  std::unique_ptr<TensorGroup> tensor_group;
  std::shared_ptr<Model> model;  // input: int64 ids [B, L]; output: logits [B, L, vocab block]
  VocabParallelEmbedding embedding{nullptr};
  std::vector<MoeLayer> moe_layers;
  std::vector<torch::Tensor> expert_parameters;  // every MoE layer's experts (not the routers)
};

// Collective over the groups (the tensor group's context is duplicated). The weights are drawn
// from torch's generator seeded with `seed`; ranks that run as threads of one process draw one at
// a time. InvalidArgumentError when the shapes do not fit: d_model by heads, heads and ffn by the
// tensor-parallel degree, experts by the expert-parallel degree, a vocabulary smaller than the
// tensor group.
TransformerLm MakeTransformerLm(const TransformerOptions& options, ParallelGroups& groups, uint64_t seed);

}  // namespace parasol::dl
