#include "parasol/dl/spatial.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/dl/autograd_handle.h"

namespace parasol::dl {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

RowRange Intersect(const RowRange& a, const RowRange& b) {
  const int64_t begin = std::max(a.begin, b.begin);
  return {begin, std::max(begin, std::min(a.end, b.end))};
}

// The pieces of rows this rank sends to and receives from each rank, in order (none to itself).
struct RowTraffic {
  std::vector<std::vector<RowRange>> send, recv;
  RowTraffic Reversed() const { return {recv, send}; }
};

// Where a piece of rows is read from or written to: a view of N x C x rows x W.
using PieceView = std::function<torch::Tensor(const RowRange&)>;

// Sends each piece of t.send (read through `source`) to its rank and writes (or, with `add`, adds)
// each piece of t.recv through `target`. `like` gives N, C, W and the options. Collective.
void MoveRows(SpatialGroup& g, const RowTraffic& t, const torch::Tensor& like, const PieceView& source,
              const PieceView& target, bool add) {
  const int64_t row = like.size(0) * like.size(1) * like.size(3);
  std::vector<uint64_t> send_counts, recv_counts;
  std::vector<torch::Tensor> parts;
  int64_t incoming = 0;
  for (size_t q = 0; q < t.send.size(); ++q) {
    int64_t sent = 0, received = 0;
    for (const RowRange& piece : t.send[q]) {
      sent += piece.size() * row;
      if (piece.size() > 0) parts.push_back(source(piece).reshape({-1}));
    }
    for (const RowRange& piece : t.recv[q]) received += piece.size() * row;
    send_counts.push_back(static_cast<uint64_t>(sent));
    recv_counts.push_back(static_cast<uint64_t>(received));
    incoming += received;
  }
  // One element at least: the collective wants a buffer even when nothing moves.
  const torch::Tensor in = parts.empty() ? torch::empty({1}, like.options()) : torch::cat(parts).contiguous();
  const torch::Tensor out = torch::empty({std::max<int64_t>(incoming, 1)}, like.options());
  collective::Alltoallv(g.context(), in.data_ptr<float>(), send_counts, out.data_ptr<float>(), recv_counts,
                        DType::kFloat32);
  int64_t at = 0;
  for (const std::vector<RowRange>& pieces : t.recv) {
    for (const RowRange& piece : pieces) {
      if (piece.size() == 0) continue;
      const int64_t count = piece.size() * row;
      const torch::Tensor block =
          out.narrow(0, at, count).view({like.size(0), like.size(1), piece.size(), like.size(3)});
      torch::Tensor dst = target(piece);
      if (add) {
        dst.add_(block);
      } else {
        dst.copy_(block);
      }
      at += count;
    }
  }
}

// Rows of `t` from global row `first`.
PieceView RowsOf(const torch::Tensor& t, int64_t first) {
  return [t, first](const RowRange& piece) { return t.narrow(2, piece.begin - first, piece.size()); };
}

std::vector<RowRange> Unflatten(const std::vector<int64_t>& flat) {
  std::vector<RowRange> out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) out.push_back({flat[i], flat[i + 1]});
  return out;
}

// Rank r sends its rows of need[q] to q and receives its need[r] from their holders.
RowTraffic NeedTraffic(const SpatialGroup& g, int64_t height, const std::vector<RowRange>& need) {
  RowTraffic t;
  const RowRange own = g.Rows(height), mine = need[static_cast<size_t>(g.rank())];
  for (int q = 0; q < g.size(); ++q) {
    const bool self = q == g.rank();
    t.send.push_back(self ? std::vector<RowRange>{}
                          : std::vector{Intersect(own, need[static_cast<size_t>(q)])});
    t.recv.push_back(self ? std::vector<RowRange>{} : std::vector{Intersect(g.Rows(height, q), mine)});
  }
  return t;
}

// Rank r sends its rows of above[q] and below[q] to q, and receives its own from their holders.
RowTraffic HaloTraffic(const SpatialGroup& g, int64_t height, const std::vector<RowRange>& above,
                       const std::vector<RowRange>& below) {
  const size_t r = static_cast<size_t>(g.rank());
  const RowRange own = g.Rows(height);
  RowTraffic t;
  for (int q = 0; q < g.size(); ++q) {
    const size_t i = static_cast<size_t>(q);
    if (i == r) {
      t.send.emplace_back();
      t.recv.emplace_back();
      continue;
    }
    const RowRange theirs = g.Rows(height, q);
    t.send.push_back({Intersect(own, above[i]), Intersect(own, below[i])});
    t.recv.push_back({Intersect(theirs, above[r]), Intersect(theirs, below[r])});
  }
  return t;
}

class ExchangeRowsFunction : public torch::autograd::Function<ExchangeRowsFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& local, int64_t height,
                               std::vector<int64_t> need_flat, int64_t group) {
    SpatialGroup& g = *FromHandle<SpatialGroup>(group);
    const std::vector<RowRange> need = Unflatten(need_flat);
    ctx->saved_data["height"] = height;
    ctx->saved_data["need"] = need_flat;
    ctx->saved_data["group"] = group;
    const torch::Tensor x = local.contiguous();
    const RowRange own = g.Rows(height), mine = need[static_cast<size_t>(g.rank())];
    torch::Tensor out = torch::empty({x.size(0), x.size(1), mine.size(), x.size(3)}, x.options());
    const RowRange kept = Intersect(own, mine);
    if (kept.size() > 0) RowsOf(out, mine.begin)(kept).copy_(RowsOf(x, own.begin)(kept));
    MoveRows(g, NeedTraffic(g, height, need), x, RowsOf(x, own.begin), RowsOf(out, mine.begin), false);
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    SpatialGroup& g = *FromHandle<SpatialGroup>(ctx->saved_data["group"]);
    const int64_t height = ctx->saved_data["height"].toInt();
    const std::vector<RowRange> need = Unflatten(ctx->saved_data["need"].toIntVector());
    const RowRange own = g.Rows(height), mine = need[static_cast<size_t>(g.rank())];
    const torch::Tensor grad = grad_outputs[0].contiguous();
    torch::Tensor out = torch::zeros({grad.size(0), grad.size(1), own.size(), grad.size(3)}, grad.options());
    const RowRange kept = Intersect(own, mine);
    if (kept.size() > 0) RowsOf(out, own.begin)(kept).copy_(RowsOf(grad, mine.begin)(kept));
    // The rows others read from this rank come back as their gradients, summed here.
    MoveRows(g, NeedTraffic(g, height, need).Reversed(), grad, RowsOf(grad, mine.begin),
             RowsOf(out, own.begin), true);
    return {out, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

class WindowRowsFunction : public torch::autograd::Function<WindowRowsFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& local, int64_t height,
                               int64_t kernel, int64_t stride, int64_t padding, int64_t group) {
    const WindowHalo halo(height, {kernel, stride, padding}, *FromHandle<SpatialGroup>(group));
    ctx->saved_data["window"] = std::vector<int64_t>{height, kernel, stride, padding, group, local.size(2)};
    const auto [top, bottom] = halo.Exchange(local);
    const torch::Tensor joined = halo.Join(top, local, bottom);
    // A custom function's output must not be a view of its input.
    return joined.is_view() ? joined.clone() : joined;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const std::vector<int64_t> w = ctx->saved_data["window"].toIntVector();
    const WindowHalo halo(w[0], {w[1], w[2], w[3]}, *FromHandle<SpatialGroup>(w[4]));
    return {halo.ReturnGradient(grad_outputs[0].contiguous().clone(), w[5]),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor()};
  }
};

class SumOverGroupFunction : public torch::autograd::Function<SumOverGroupFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t group) {
    ctx->saved_data["group"] = group;
    return Sum(x, *FromHandle<SpatialGroup>(group));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {Sum(grad_outputs[0], *FromHandle<SpatialGroup>(ctx->saved_data["group"])), torch::Tensor()};
  }

 private:
  static torch::Tensor Sum(const torch::Tensor& x, SpatialGroup& g) {
    torch::Tensor y = x.contiguous().clone();
    collective::Allreduce(g.context(), y.data_ptr<float>(), y.data_ptr<float>(),
                          static_cast<size_t>(y.numel()), DType::kFloat32);
    return y;
  }
};

}  // namespace

int64_t WindowOutputHeight(int64_t height, const Window& w) {
  return (height + 2 * w.padding - w.kernel) / w.stride + 1;
}

RowRange SpatialGroup::Rows(int64_t height, int rank) const {
  const auto [begin, end] = collective::BlockRange(static_cast<size_t>(height), size(), rank);
  return {static_cast<int64_t>(begin), static_cast<int64_t>(end)};
}

torch::Tensor SpatialGroup::Local(const torch::Tensor& whole) const {
  const RowRange r = Rows(whole.size(2));
  return whole.narrow(2, r.begin, r.size());
}

torch::Tensor ExchangeRows(const torch::Tensor& local, int64_t height, const std::vector<RowRange>& need,
                           SpatialGroup& group) {
  if (group.size() == 1) return local.narrow(2, need[0].begin, need[0].size());
  std::vector<int64_t> flat;
  for (const RowRange& r : need) {
    if (r.begin < 0 || r.end > height || r.end < r.begin) {
      throw InternalError(fmt::format("rows [{}, {}) of a height-{} tensor", r.begin, r.end, height));
    }
    flat.push_back(r.begin);
    flat.push_back(r.end);
  }
  return ExchangeRowsFunction::apply(local, height, flat, AsHandle(&group));
}

WindowHalo::WindowHalo(int64_t height, const Window& w, SpatialGroup& group)
    : group_(group), height_(height) {
  const int64_t out_height = WindowOutputHeight(height, w);
  if (out_height < group.size()) {
    throw InvalidArgumentError(fmt::format(
        "--spatial-parallel {}: a layer's output of {} rows (from {}) cannot give every rank a row: use "
        "larger images or fewer ranks per example",
        group.size(), out_height, height));
  }
  for (int q = 0; q < group.size(); ++q) {
    const RowRange out = group.Rows(out_height, q), own = group.Rows(height, q);
    const RowRange reads{out.begin * w.stride - w.padding, (out.end - 1) * w.stride - w.padding + w.kernel};
    above_.push_back(Intersect({reads.begin, std::min(reads.end, own.begin)}, {0, height}));
    below_.push_back(Intersect({std::max(reads.begin, own.end), reads.end}, {0, height}));
    if (q != group.rank()) continue;
    pad_top_ = std::max<int64_t>(0, -reads.begin);
    pad_bottom_ = std::max<int64_t>(0, reads.end - height);
    skip_top_ = std::clamp<int64_t>(reads.begin - own.begin, 0, own.size());
    skip_bottom_ = std::clamp<int64_t>(own.end - reads.end, 0, own.size() - skip_top_);
  }
}

std::pair<torch::Tensor, torch::Tensor> WindowHalo::Exchange(const torch::Tensor& local) const {
  const size_t r = static_cast<size_t>(group_.rank());
  const RowRange own = group_.Rows(height_), above = above_[r], below = below_[r];
  const RowTraffic t = HaloTraffic(group_, height_, above_, below_);
  const torch::Tensor x = local.contiguous();
  torch::Tensor top = torch::zeros({x.size(0), x.size(1), pad_top_ + above.size(), x.size(3)}, x.options());
  torch::Tensor bottom =
      torch::zeros({x.size(0), x.size(1), below.size() + pad_bottom_, x.size(3)}, x.options());
  const PieceView into_halo = [&](const RowRange& piece) {
    return piece.begin < own.begin ? top.narrow(2, pad_top_ + piece.begin - above.begin, piece.size())
                                   : bottom.narrow(2, piece.begin - below.begin, piece.size());
  };
  MoveRows(group_, t, x, RowsOf(x, own.begin), into_halo, false);
  return {top, bottom};
}

torch::Tensor WindowHalo::Join(const torch::Tensor& top, const torch::Tensor& local,
                               const torch::Tensor& bottom) const {
  const torch::Tensor middle = local.narrow(2, skip_top_, local.size(2) - skip_top_ - skip_bottom_);
  if (top.size(2) == 0 && bottom.size(2) == 0) return middle;
  return torch::cat({top, middle, bottom}, 2);
}

torch::Tensor WindowHalo::ReturnGradient(const torch::Tensor& grad_joined, int64_t local_rows) const {
  const size_t r = static_cast<size_t>(group_.rank());
  const RowRange own = group_.Rows(height_), above = above_[r], below = below_[r];
  const int64_t top_rows = pad_top_ + above.size(), middle = local_rows - skip_top_ - skip_bottom_;
  // Where the window reads every own row, the gradient is the middle of the joined one's (which
  // the halo's returns are then added to: it is the caller's to overwrite).
  torch::Tensor grad;
  if (skip_top_ == 0 && skip_bottom_ == 0) {
    grad = grad_joined.narrow(2, top_rows, middle);
  } else {
    grad = torch::zeros({grad_joined.size(0), grad_joined.size(1), local_rows, grad_joined.size(3)},
                        grad_joined.options());
    grad.narrow(2, skip_top_, middle).copy_(grad_joined.narrow(2, top_rows, middle));
  }
  // The halo's rows go back to where they came from.
  const RowTraffic t = HaloTraffic(group_, height_, above_, below_).Reversed();
  const PieceView from_halo = [&](const RowRange& piece) {
    return piece.begin < own.begin
               ? grad_joined.narrow(2, pad_top_ + piece.begin - above.begin, piece.size())
               : grad_joined.narrow(2, top_rows + middle + piece.begin - below.begin, piece.size());
  };
  MoveRows(group_, t, grad_joined, from_halo, RowsOf(grad, own.begin), true);
  return grad;
}

torch::Tensor WindowRows(const torch::Tensor& local, int64_t height, const Window& w, SpatialGroup& group) {
  return WindowRowsFunction::apply(local, height, w.kernel, w.stride, w.padding, AsHandle(&group));
}

torch::Tensor GatherAllRows(const torch::Tensor& local, int64_t height, SpatialGroup& group) {
  return ExchangeRows(local, height, std::vector<RowRange>(static_cast<size_t>(group.size()), {0, height}),
                      group);
}

torch::Tensor SumOverGroup(const torch::Tensor& x, SpatialGroup& group) {
  if (group.size() == 1) return x;
  return SumOverGroupFunction::apply(x, AsHandle(&group));
}

}  // namespace parasol::dl
