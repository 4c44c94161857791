#include "parasol/dl/moe.h"

#include <cmath>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/dl/autograd_handle.h"

namespace parasol::dl {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void AllToAll(comm::Context& group, const torch::Tensor& in, torch::Tensor& out) {
  collective::Alltoall(group, in.data_ptr<float>(), out.data_ptr<float>(),
                       static_cast<size_t>(in.numel() / group.size()), DType::kFloat32);
}

// Block p of the first dimension to rank p of the group, arriving in block `rank`; its own
// reverse, so backward sends the gradients the same way.
class AllToAllFunction : public torch::autograd::Function<AllToAllFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t group) {
    ctx->saved_data["group"] = group;
    const torch::Tensor in = x.contiguous();
    torch::Tensor out = torch::empty_like(in);
    AllToAll(*FromHandle<comm::Context>(group), in, out);
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor g = grad_outputs[0].contiguous();
    torch::Tensor out = torch::empty_like(g);
    AllToAll(*FromHandle<comm::Context>(ctx->saved_data["group"]), g, out);
    return {out, torch::Tensor()};
  }
};

// Every rank draws the full [experts, ...] tensor and keeps experts [first, first + count).
torch::Tensor DrawExperts(std::vector<int64_t> shape, double std, int64_t first, int64_t count) {
  return (torch::randn(shape) * std).narrow(0, first, count).contiguous();
}

}  // namespace

torch::Tensor BalanceLoss(const torch::Tensor& probs, const torch::Tensor& first_choice) {
  const int64_t e = probs.size(1);
  const torch::Tensor share = torch::one_hot(first_choice, e).to(torch::kFloat32).mean(0);
  return static_cast<double>(e) * (share * probs.mean(0)).sum();
}

torch::Tensor RouterZLoss(const torch::Tensor& logits) { return torch::logsumexp(logits, 1).pow(2).mean(); }

MoeLayerImpl::MoeLayerImpl(const MoeOptions& options, comm::Context& expert_group)
    : options_(options), group_(expert_group) {
  const int64_t e = options.experts, p = expert_group.size();
  if (e < 1 || e % p != 0) {
    throw InvalidArgumentError(fmt::format("{} experts do not split over {} expert-parallel ranks", e, p));
  }
  if (options.top_k < 1 || options.top_k > std::min<int64_t>(2, e)) {
    throw InvalidArgumentError(fmt::format("top-k routing with k = {} (1 or 2, at most the {} experts)",
                                           options.top_k, e));
  }
  local_ = e / p;
  first_ = local_ * expert_group.rank();
  const int64_t d = options.d_model, ff = options.d_ff;
  router = register_parameter("router", torch::randn({e, d}) * options.init_std);
  w1 = register_parameter("w1", DrawExperts({e, d, ff}, options.init_std, first_, local_));
  b1 = register_parameter("b1", torch::zeros({local_, ff}));
  w2 = register_parameter("w2", DrawExperts({e, ff, d}, options.out_init_std, first_, local_));
  b2 = register_parameter("b2", torch::zeros({local_, d}));
}

torch::Tensor MoeLayerImpl::AssignSlots(const torch::Tensor& choice, int64_t capacity) {
  const int64_t e = options_.experts, n = choice.size(0);
  torch::Tensor taken = torch::zeros({e}, torch::kLong);  // slots filled by earlier choices
  std::vector<torch::Tensor> slots;
  for (int64_t j = 0; j < choice.size(1); ++j) {
    const torch::Tensor c = choice.select(1, j);
    const torch::Tensor hot = torch::one_hot(c, e);
    // A token's place among the tokens before it that chose the same expert, after earlier choices.
    const torch::Tensor place = (hot.cumsum(0) - 1 + taken).gather(1, c.unsqueeze(1)).squeeze(1);
    taken += hot.sum(0);
    slots.push_back(torch::where(place < capacity, c * capacity + place, torch::full({n}, -1, torch::kLong)));
  }
  torch::Tensor all = torch::stack(slots, 1);  // [N, k]
  stats_.routed.assign(taken.data_ptr<int64_t>(), taken.data_ptr<int64_t>() + e);
  stats_.choices = all.numel();
  stats_.dropped = (all < 0).sum().item<int64_t>();
  return all;
}

torch::Tensor MoeLayerImpl::RunExperts(const torch::Tensor& slots) {
  const int64_t p = group_.size(), c = slots.size(1), d = slots.size(2);
  torch::Tensor in = slots;  // [E, C, d]
  if (p > 1) {
    // [P(source), El, C, d] -> [El, P * C, d]: each local expert's slots from every rank.
    in = AllToAllFunction::apply(slots, AsHandle(&group_)).view({p, local_, c, d}).transpose(0, 1).reshape(
        {local_, p * c, d});
  }
  torch::Tensor h = torch::gelu(torch::baddbmm(b1.unsqueeze(1), in, w1));
  torch::Tensor out = torch::baddbmm(b2.unsqueeze(1), h, w2);
  if (p > 1) {
    out = out.view({local_, p, c, d}).transpose(0, 1).contiguous();  // [P(source), El, C, d]
    out = AllToAllFunction::apply(out, AsHandle(&group_)).view({options_.experts, c, d});
  }
  return out;
}

torch::Tensor MoeLayerImpl::forward(const torch::Tensor& x) {
  const int64_t n = x.size(0), d = x.size(1), e = options_.experts, k = options_.top_k;
  const torch::Tensor logits = torch::matmul(x, router.t());
  const torch::Tensor probs = torch::softmax(logits, 1);
  auto [top, choice] = probs.topk(k, 1);
  const torch::Tensor gates = k == 1 ? top : top / top.sum(1, true);
  const double factor = is_training() ? options_.capacity_factor : options_.eval_capacity_factor;
  const auto capacity = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(static_cast<double>(k * n) * factor / static_cast<double>(e))));
  const torch::Tensor slots = AssignSlots(choice, capacity).reshape({-1});
  const torch::Tensor tokens = torch::arange(n, torch::kLong).repeat_interleave(k);
  const torch::Tensor kept = (slots >= 0).nonzero().squeeze(1);
  const torch::Tensor kept_slots = slots.index_select(0, kept), kept_tokens = tokens.index_select(0, kept);
  const torch::Tensor buffer =
      torch::zeros({e * capacity, d}).index_add(0, kept_slots, x.index_select(0, kept_tokens));
  const torch::Tensor out = RunExperts(buffer.view({e, capacity, d})).reshape({e * capacity, d});
  const torch::Tensor weighted =
      out.index_select(0, kept_slots) * gates.reshape({-1}).index_select(0, kept).unsqueeze(1);
  balance_loss_ = BalanceLoss(probs, choice.select(1, 0));
  z_loss_ = RouterZLoss(logits);
  return torch::zeros({n, d}).index_add(0, kept_tokens, weighted);
}

}  // namespace parasol::dl
