// A sparse mixture-of-experts feed-forward layer (Switch Transformer, ST-MoE) with expert
// parallelism: E experts (two-layer GELU networks) spread over the P ranks of an expert group;
// each token goes to its top-k experts by a learned router.
//
// Forward, on each rank's own tokens:
//   router      logits = x Wr^T, probabilities p = softmax(logits); top-k experts per token;
//               gates: p of the expert (k = 1), or the k probabilities renormalised (k = 2)
//   capacity    C = ceil(k N c / E) tokens per expert (c: the capacity factor, another one when
//               not training); a token's choices take slots in priority order (every token's first
//               choice before any second one, tokens in order); a choice past C is dropped: the
//               token passes through the residual only (its other choice may still be taken)
//   dispatch    the kept choices only, sorted by slot (grouped by expert, in the order they took
//               their places): no capacity padding is moved or computed. An all-to-all of counts,
//               then one of the rows (variable blocks) over the expert group, so each rank holds
//               its E / P experts' rows from every rank; each expert's rows through it; back by
//               the reverse exchange; each token's kept outputs summed, weighted by the gates
//   losses      load balancing E sum_e f_e P_e (f_e: share of the N k choices that picked e, P_e:
//               mean router probability of e; 1 when balanced; Switch's loss for k = 1, and for
//               k = 2 every choice counted, as Megablocks does) and the router z-loss
//               mean_tokens (log sum_e exp(logits))^2, both kept for the trainer to weigh
//
// Every rank draws all E experts' initial weights and keeps its own, so the layer's values do not
// depend on P.
//
// Threading: runs on the thread that runs its model's forward and backward, which uses the expert
// group's Context (also in backward: the all-to-alls' reverse).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "parasol/comm/context.h"

namespace parasol::dl {

struct MoeOptions {
  int64_t d_model = 128;
  int64_t d_ff = 256;  // per expert
  int64_t experts = 8;
  int64_t top_k = 2;  // 1 or 2
  double capacity_factor = 1.25;
  double eval_capacity_factor = 2.0;
  double init_std = 0.02;      // router and first layer
  double out_init_std = 0.02;  // second layer (scaled down with depth, as the model's residual outputs)
};

// What the last forward did, for metrics (this rank's tokens).
struct MoeStats {
  std::vector<int64_t> routed;  // per expert: choices that picked it (kept or dropped)
  int64_t choices = 0;          // tokens x k
  int64_t dropped = 0;          // choices past capacity
};

class MoeLayerImpl : public torch::nn::Module {
 public:
  // REQUIRES: the expert group's size divides `experts`, 1 <= top_k <= min(2, experts) (else
  // InvalidArgumentError).
  MoeLayerImpl(const MoeOptions& options, comm::Context& expert_group);
  torch::Tensor forward(const torch::Tensor& x);  // [N, d] -> [N, d]

  // Of the last forward: the auxiliary losses (scalars, part of the autograd graph) and statistics.
  const torch::Tensor& balance_loss() const { return balance_loss_; }
  const torch::Tensor& z_loss() const { return z_loss_; }
  const MoeStats& stats() const { return stats_; }
  // The experts' weights: reduced over the ranks that hold the same experts only.
  std::vector<torch::Tensor> expert_parameters() const { return {w1, b1, w2, b2}; }
  int64_t first_expert() const { return first_; }

  torch::Tensor router;          // [E, d]
  torch::Tensor w1, b1, w2, b2;  // this rank's experts: [El, d, ff], [El, ff], [El, ff, d], [El, d]

 private:
  // Slot of each (token, choice) in the [E, C] buffer, -1 when dropped; fills stats_.
  torch::Tensor AssignSlots(const torch::Tensor& choice, int64_t capacity);
  torch::Tensor RunExperts(const torch::Tensor& rows, const std::vector<int64_t>& counts);
  torch::Tensor ApplyExperts(const torch::Tensor& in, const std::vector<int64_t>& counts);
  torch::Tensor AllToAllV(const torch::Tensor& rows, const std::vector<uint64_t>& send,
                          const std::vector<uint64_t>& recv);

  MoeOptions options_;
  comm::Context& group_;
  int64_t local_ = 0, first_ = 0;
  torch::Tensor balance_loss_, z_loss_;
  MoeStats stats_;
};
TORCH_MODULE(MoeLayer);

// The load-balancing loss from router probabilities [N, E] and each token's choices [N, k], and
// ST-MoE's z-loss from router logits [N, E].
torch::Tensor BalanceLoss(const torch::Tensor& probs, const torch::Tensor& choices);
torch::Tensor RouterZLoss(const torch::Tensor& logits);

}  // namespace parasol::dl
