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

// Variable blocks of rows: send[q] rows (of the row width) to rank q, recv[q] from it, in rank
// order; backward sends the gradients back the other way.
class AllToAllVFunction : public torch::autograd::Function<AllToAllVFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& rows, int64_t group,
                               const torch::Tensor& send, const torch::Tensor& recv) {
    ctx->saved_data["group"] = group;
    ctx->save_for_backward({send, recv});
    return Exchange(*FromHandle<comm::Context>(group), rows.contiguous(), send, recv, rows.size(1));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor g = grad_outputs[0].contiguous();
    return {Exchange(*FromHandle<comm::Context>(ctx->saved_data["group"]), g, saved[1], saved[0], g.size(1)),
            torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }

 private:
  static torch::Tensor Exchange(comm::Context& group, const torch::Tensor& rows, const torch::Tensor& send,
                                const torch::Tensor& recv, int64_t width) {
    std::vector<uint64_t> s, r;
    int64_t total = 0;
    for (int64_t q = 0; q < send.numel(); ++q) {
      s.push_back(static_cast<uint64_t>(send[q].item<int64_t>() * width));
      r.push_back(static_cast<uint64_t>(recv[q].item<int64_t>() * width));
      total += recv[q].item<int64_t>();
    }
    torch::Tensor out = torch::empty({total, width});
    collective::Alltoallv(group, rows.data_ptr<float>(), s, out.data_ptr<float>(), r, DType::kFloat32);
    return out;
  }
};

// Every rank draws the full [experts, ...] tensor and keeps experts [first, first + count).
torch::Tensor DrawExperts(std::vector<int64_t> shape, double std, int64_t first, int64_t count) {
  return (torch::randn(shape) * std).narrow(0, first, count).contiguous();
}

}  // namespace

torch::Tensor BalanceLoss(const torch::Tensor& probs, const torch::Tensor& choices) {
  const int64_t e = probs.size(1), k = choices.size(1);
  // Every choice counts: with first choices alone (Switch, k = 1) an expert that is every token's
  // second choice escapes the loss and takes twice its share of the load.
  const torch::Tensor share =
      torch::one_hot(choices, e).to(torch::kFloat32).sum(1).mean(0) / static_cast<double>(k);
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
    throw InvalidArgumentError(
        fmt::format("top-k routing with k = {} (1 or 2, at most the {} experts)", options.top_k, e));
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

// The local experts on their rows of `in` (expert-major: `counts` rows for each, in order).
torch::Tensor MoeLayerImpl::ApplyExperts(const torch::Tensor& in, const std::vector<int64_t>& counts) {
  // One unbind and one split per call rather than an index per expert: the backward of each index
  // would write a zeroed copy of the whole tensor.
  const std::vector<torch::Tensor> w1s = w1.unbind(0), b1s = b1.unbind(0), w2s = w2.unbind(0),
                                   b2s = b2.unbind(0);
  const std::vector<torch::Tensor> parts = in.split_with_sizes(counts);
  std::vector<torch::Tensor> outs;
  for (int64_t j = 0; j < local_; ++j) {
    if (counts[static_cast<size_t>(j)] == 0) continue;
    const auto e = static_cast<size_t>(j);
    outs.push_back(torch::addmm(b2s[e], torch::gelu(torch::addmm(b1s[e], parts[e], w1s[e])), w2s[e]));
  }
  // No row for any local expert: still an output of `in` (0 rows), so that backward runs the
  // reverse all-to-alls here as on every other rank of the group.
  return outs.empty() ? in * 0.0 : torch::cat(outs);
}

// Rows sorted by expert (counts[e] rows for expert e, every expert's) through the experts,
// wherever they live; the outputs come back in the same order.
torch::Tensor MoeLayerImpl::RunExperts(const torch::Tensor& rows, const std::vector<int64_t>& counts) {
  const int64_t p = group_.size();
  if (p == 1) return ApplyExperts(rows, counts);
  // Every rank tells every other how many rows it sends each of its experts.
  std::vector<int64_t> heard(counts.size());
  collective::Alltoall(group_, counts.data(), heard.data(), static_cast<size_t>(local_), DType::kInt64);
  std::vector<uint64_t> send(static_cast<size_t>(p), 0), recv(static_cast<size_t>(p), 0);
  std::vector<int64_t> per_expert(static_cast<size_t>(local_), 0);
  for (int64_t q = 0; q < p; ++q) {
    for (int64_t j = 0; j < local_; ++j) {
      send[static_cast<size_t>(q)] += static_cast<uint64_t>(counts[static_cast<size_t>(q * local_ + j)]);
      recv[static_cast<size_t>(q)] += static_cast<uint64_t>(heard[static_cast<size_t>(q * local_ + j)]);
      per_expert[static_cast<size_t>(j)] += heard[static_cast<size_t>(q * local_ + j)];
    }
  }
  const torch::Tensor arrived = AllToAllV(rows, send, recv);  // by source, then expert
  // Source-major to expert-major: the row order the experts take, and back.
  std::vector<int64_t> order;
  std::vector<int64_t> source_start(static_cast<size_t>(p), 0);
  for (int64_t q = 1; q < p; ++q)
    source_start[static_cast<size_t>(q)] =
        source_start[static_cast<size_t>(q - 1)] + static_cast<int64_t>(recv[static_cast<size_t>(q - 1)]);
  for (int64_t j = 0; j < local_; ++j) {
    for (int64_t q = 0; q < p; ++q) {
      int64_t at = source_start[static_cast<size_t>(q)];
      for (int64_t i = 0; i < j; ++i) at += heard[static_cast<size_t>(q * local_ + i)];
      for (int64_t r = 0; r < heard[static_cast<size_t>(q * local_ + j)]; ++r) order.push_back(at + r);
    }
  }
  const torch::Tensor to_expert = torch::tensor(order, torch::kLong);
  const torch::Tensor back =
      torch::empty_like(to_expert).scatter_(0, to_expert, torch::arange(to_expert.numel()));
  const torch::Tensor done =
      ApplyExperts(arrived.index_select(0, to_expert), per_expert).index_select(0, back);
  return AllToAllV(done, recv, send);
}

torch::Tensor MoeLayerImpl::AllToAllV(const torch::Tensor& rows, const std::vector<uint64_t>& send,
                                      const std::vector<uint64_t>& recv) {
  return AllToAllVFunction::apply(rows, AsHandle(&group_),
                                  torch::tensor(std::vector<int64_t>(send.begin(), send.end())),
                                  torch::tensor(std::vector<int64_t>(recv.begin(), recv.end())));
}

// Only the kept choices move and are computed (no capacity padding): sorted by slot, they are
// grouped by expert in the order they took their places.
torch::Tensor MoeLayerImpl::forward(const torch::Tensor& x) {
  const int64_t n = x.size(0), e = options_.experts, k = options_.top_k;
  const torch::Tensor logits = torch::matmul(x, router.t());
  const torch::Tensor probs = torch::softmax(logits, 1);
  auto [top, choice] = probs.topk(k, 1);
  const torch::Tensor gates = k == 1 ? top : top / top.sum(1, true);
  const double factor = is_training() ? options_.capacity_factor : options_.eval_capacity_factor;
  const auto capacity = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(static_cast<double>(k * n) * factor / static_cast<double>(e))));
  const torch::Tensor slots = AssignSlots(choice, capacity).reshape({-1});
  const torch::Tensor kept = (slots >= 0).nonzero().squeeze(1);
  const auto [sorted_slots, by_slot] = slots.index_select(0, kept).sort();
  const torch::Tensor choices = kept.index_select(0, by_slot);  // (token, choice) flat index, by slot
  const torch::Tensor tokens = choices.div(k, "floor");
  const torch::Tensor per_expert = torch::bincount(sorted_slots.div(capacity, "floor"), {}, e);
  std::vector<int64_t> counts(per_expert.data_ptr<int64_t>(), per_expert.data_ptr<int64_t>() + e);
  const torch::Tensor out = RunExperts(x.index_select(0, tokens), counts);
  const torch::Tensor weighted = out * gates.reshape({-1}).index_select(0, choices).unsqueeze(1);
  balance_loss_ = BalanceLoss(probs, choice);
  z_loss_ = RouterZLoss(logits);
  return torch::zeros({n, x.size(1)}).index_add(0, tokens, weighted);
}

}  // namespace parasol::dl
