#include "parasol/dl/tensor_parallel.h"

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/dl/autograd_handle.h"

namespace parasol::dl {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void SumOver(comm::Context& ctx, torch::Tensor& t, ReduceOp op = ReduceOp::kSum) {
  if (ctx.size() == 1) return;
  if (!t.is_contiguous() || t.scalar_type() != torch::kFloat32) {
    throw InternalError("tensor group sum: a contiguous float tensor is needed");
  }
  collective::AllreduceOptions o;
  o.op = op;
  collective::Allreduce(ctx, t.data_ptr<float>(), t.data_ptr<float>(), static_cast<size_t>(t.numel()),
                        DType::kFloat32, o);
}

class CopyToFunction : public torch::autograd::Function<CopyToFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t group) {
    ctx->saved_data["group"] = group;
    return x.view_as(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    torch::Tensor g = grad_outputs[0].contiguous().clone();
    FromHandle<TensorGroup>(ctx->saved_data["group"])->Sum(g);
    return {g, torch::Tensor()};
  }
};

class ReduceFromFunction : public torch::autograd::Function<ReduceFromFunction> {
 public:
  static torch::Tensor forward(AutogradContext*, const torch::Tensor& x, int64_t group) {
    torch::Tensor y = x.contiguous().clone();
    FromHandle<TensorGroup>(group)->Sum(y);
    return y;
  }
  static variable_list backward(AutogradContext*, variable_list grad_outputs) {
    return {grad_outputs[0], torch::Tensor()};
  }
};

// y = x W^T + b over the last dimension of x (no bias when b is empty: autograd functions take no
// undefined tensor); backward sums dx over the group on the group's communication thread while dW
// and db are formed here.
class ColumnParallelFunction : public torch::autograd::Function<ColumnParallelFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& b, int64_t group) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["group"] = group;
    ctx->saved_data["bias"] = b.numel() > 0;
    torch::Tensor y = torch::matmul(x, w.t());
    return b.numel() > 0 ? y + b : y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& w = saved[1];
    TensorGroup& group = *FromHandle<TensorGroup>(ctx->saved_data["group"]);
    const torch::Tensor g = grad_outputs[0].contiguous();
    torch::Tensor dx = torch::matmul(g, w).contiguous();
    std::future<void> sum;
    if (group.size() > 1) sum = group.StartSum(dx);
    const torch::Tensor g2 = g.reshape({-1, g.size(-1)});
    torch::Tensor dw = torch::mm(g2.t(), x.reshape({-1, x.size(-1)}));
    torch::Tensor db = ctx->saved_data["bias"].toBool() ? g2.sum(0) : torch::Tensor();
    if (sum.valid()) sum.get();
    return {dx, dw, db, torch::Tensor()};
  }
};

// Per-token losses of vocabulary-split logits. Forward: the row max (max over the group), the
// sum of exponentials and the target's logit (summed over the group, one call for both).
class CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& logits,
                               const torch::Tensor& targets, int64_t vocab_begin, int64_t group_handle) {
    TensorGroup& group = *FromHandle<TensorGroup>(group_handle);
    const int64_t v = logits.size(1);
    torch::Tensor top = std::get<0>(logits.max(1)).contiguous();
    SumOver(group.context(), top, ReduceOp::kMax);
    torch::Tensor e = (logits - top.unsqueeze(1)).exp_();
    const torch::Tensor local = targets - vocab_begin;
    const torch::Tensor mine = (local >= 0).logical_and(local < v);
    const torch::Tensor safe = local.clamp(0, std::max<int64_t>(v - 1, 0));
    torch::Tensor picked = logits.gather(1, safe.unsqueeze(1)).squeeze(1) * mine.to(torch::kFloat32);
    torch::Tensor sums = torch::stack({e.sum(1), picked}).contiguous();  // [2, n]
    group.Sum(sums);
    const torch::Tensor total = sums[0];
    e.div_(total.unsqueeze(1));  // the softmax, this rank's block
    ctx->save_for_backward({e, safe, mine});
    return total.log() + top - sums[1];
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor g = grad_outputs[0];
    torch::Tensor d = saved[0] * g.unsqueeze(1);
    d.scatter_add_(1, saved[1].unsqueeze(1), (-g * saved[2].to(torch::kFloat32)).unsqueeze(1));
    return {d, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// The full weight drawn from torch's generator, rows [begin, end) of each of `parts` blocks kept.
torch::Tensor DrawRows(int64_t rows, int64_t cols, int64_t parts, int ranks, int rank, double init_std) {
  torch::Tensor full = torch::randn({rows, cols}) * init_std;
  const int64_t block = rows / parts;
  const auto [b, e] = collective::BlockRange(static_cast<size_t>(block), ranks, rank);
  std::vector<torch::Tensor> kept;
  for (int64_t p = 0; p < parts; ++p) {
    kept.push_back(full.narrow(0, p * block + static_cast<int64_t>(b), static_cast<int64_t>(e - b)));
  }
  return torch::cat(kept).contiguous();
}

}  // namespace

TensorGroup::TensorGroup(comm::Context& group)
    : group_(group), async_(group.Duplicate(group.DefaultDeadline())) {}

void TensorGroup::Sum(torch::Tensor& t) { SumOver(group_, t); }

std::future<void> TensorGroup::StartSum(torch::Tensor t) {
  return thread_.Submit([this, t]() mutable { SumOver(*async_, t); });
}

torch::Tensor CopyToTensorGroup(const torch::Tensor& x, TensorGroup& group) {
  if (group.size() == 1) return x;
  return CopyToFunction::apply(x, AsHandle(&group));
}

torch::Tensor ReduceFromTensorGroup(const torch::Tensor& x, TensorGroup& group) {
  if (group.size() == 1) return x;
  return ReduceFromFunction::apply(x, AsHandle(&group));
}

torch::Tensor ColumnParallelMatmul(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                   TensorGroup& group) {
  if (group.size() == 1)
    return b.defined() ? torch::nn::functional::linear(x, w, b) : torch::matmul(x, w.t());
  return ColumnParallelFunction::apply(x, w, b.defined() ? b : torch::empty({0}), AsHandle(&group));
}

ColumnParallelLinearImpl::ColumnParallelLinearImpl(int64_t in, int64_t out, TensorGroup& group, int64_t parts,
                                                   double init_std)
    : group_(group) {
  if (parts < 1 || out % parts != 0 || (out / parts) % group.size() != 0) {
    throw InvalidArgumentError(
        fmt::format("column-parallel layer of {} outputs in {} part(s): each part must split evenly over {} "
                    "tensor-parallel ranks",
                    out, parts, group.size()));
  }
  weight = register_parameter("weight", DrawRows(out, in, parts, group.size(), group.rank(), init_std));
  bias = register_parameter("bias", torch::zeros({out / group.size()}));
}

torch::Tensor ColumnParallelLinearImpl::forward(const torch::Tensor& x) {
  return ColumnParallelMatmul(x, weight, bias, group_);
}

RowParallelLinearImpl::RowParallelLinearImpl(int64_t in, int64_t out, TensorGroup& group, double init_std)
    : group_(group) {
  if (in % group.size() != 0) {
    throw InvalidArgumentError(fmt::format(
        "row-parallel layer of {} inputs does not split over {} tensor-parallel ranks", in, group.size()));
  }
  // Columns of the full weight: draw it whole, keep this rank's block of columns.
  torch::Tensor full = torch::randn({out, in}) * init_std;
  const auto [b, e] = collective::BlockRange(static_cast<size_t>(in), group.size(), group.rank());
  weight = register_parameter(
      "weight", full.narrow(1, static_cast<int64_t>(b), static_cast<int64_t>(e - b)).contiguous());
  bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor RowParallelLinearImpl::forward(const torch::Tensor& x) {
  return ReduceFromTensorGroup(torch::matmul(x, weight.t()), group_) + bias;
}

VocabParallelEmbeddingImpl::VocabParallelEmbeddingImpl(int64_t vocab, int64_t dim, TensorGroup& group,
                                                       double init_std)
    : group_(group) {
  if (vocab < group.size()) {
    throw InvalidArgumentError(fmt::format(
        "a vocabulary of {} words cannot split over {} tensor-parallel ranks", vocab, group.size()));
  }
  const auto [b, e] = collective::BlockRange(static_cast<size_t>(vocab), group.size(), group.rank());
  begin_ = static_cast<int64_t>(b);
  end_ = static_cast<int64_t>(e);
  torch::Tensor full = torch::randn({vocab, dim}) * init_std;
  weight = register_parameter("weight", full.narrow(0, begin_, end_ - begin_).contiguous());
}

torch::Tensor VocabParallelEmbeddingImpl::forward(const torch::Tensor& ids) {
  if (group_.size() == 1) return torch::embedding(weight, ids);
  const torch::Tensor local = ids - begin_;
  const torch::Tensor mine = (local >= 0).logical_and(local < end_ - begin_);
  const torch::Tensor rows = torch::embedding(weight, local.clamp(0, end_ - begin_ - 1));
  return ReduceFromTensorGroup(rows * mine.unsqueeze(-1).to(torch::kFloat32), group_);
}

torch::Tensor VocabParallelEmbeddingImpl::Logits(const torch::Tensor& x) {
  return ColumnParallelMatmul(x, weight, torch::Tensor(), group_);
}

torch::Tensor VocabParallelCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                        int64_t vocab_begin, TensorGroup& group) {
  if (group.size() == 1) {
    return torch::nn::functional::cross_entropy(
        logits, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  }
  return CrossEntropyFunction::apply(logits, targets, vocab_begin, AsHandle(&group));
}

}  // namespace parasol::dl
