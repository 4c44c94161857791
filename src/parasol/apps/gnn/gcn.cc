#include "parasol/apps/gnn/gcn.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

Gcn::Gcn(size_t features, std::vector<size_t> hidden, size_t classes)
    : GnnModel(features, hidden, classes, /*vectors=*/1) {
  shapes_ = {.widths = widths_, .offsets = offsets_};
  h_.resize(layers());
  t_.resize(layers());
  z_.resize(layers());
}

void Gcn::InitGlorot(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::fill(params_.begin(), params_.end(), 0.0f);
  for (size_t l = 0; l < layers(); ++l)
    FillGlorot(&rng, in_width(l), out_width(l), params_.data() + weight_offset(l));
}

namespace {

// out row i = sum over row i's entries a_ik in[column k] for columns [c0, c0 + w), w <= W (W when
// kFixed: the loops unrolled), for the owned rows in `rows`: the sum is kept in registers and the
// rows ahead are prefetched, since the neighbours' rows are scattered over memory (the cost is
// the misses).
template <size_t W, bool kFixed>
void AggregateColumns(const GraphShard& s, size_t width, size_t c0, size_t w, RowRange rows, const float* in,
                      float* out) {
  constexpr uint64_t kAhead = 8;
  const uint32_t* cols = s.adj_columns.data();
  const float* vals = s.adj_values.data();
  const uint64_t total = s.adj_columns.size();
  for (size_t i = rows.begin; i < rows.end; ++i) {
    float acc[W] = {};
    for (uint64_t k = s.adj_offsets[i]; k < s.adj_offsets[i + 1]; ++k) {
      if (k + kAhead < total) __builtin_prefetch(in + static_cast<size_t>(cols[k + kAhead]) * width + c0);
      const float a = vals[k];
      const float* x = in + static_cast<size_t>(cols[k]) * width + c0;
      for (size_t j = 0; j < (kFixed ? W : w); ++j) acc[j] += a * x[j];
    }
    float* o = out + i * width + c0;
    for (size_t j = 0; j < (kFixed ? W : w); ++j) o[j] = acc[j];
  }
}

// Adds the partial weight gradients of the intervals into gw, in interval order.
void AddPartials(const std::vector<std::vector<float>>& partials, float* gw) {
  for (const std::vector<float>& p : partials)
    for (size_t k = 0; k < p.size(); ++k) gw[k] += p[k];
}

}  // namespace

void Gcn::Aggregate(const GraphShard& s, size_t width, RowRange rows, const float* in, float* out) const {
  size_t c0 = 0;
  for (; c0 + 16 <= width; c0 += 16) AggregateColumns<16, true>(s, width, c0, 16, rows, in, out);
  if (c0 < width) AggregateColumns<16, false>(s, width, c0, width - c0, rows, in, out);
}

void Gcn::AggregateTransposed(const GraphShard& s, size_t width, std::span<const float> in,
                              std::span<float> out) const {
  constexpr uint64_t kAhead = 8;
  std::fill(out.begin(), out.end(), 0.0f);
  const uint32_t* cols = s.adj_columns.data();
  const float* vals = s.adj_values.data();
  const uint64_t total = s.adj_columns.size();
  for (size_t i = 0; i < s.owned.size(); ++i) {
    const float* x = in.data() + i * width;
    for (uint64_t k = s.adj_offsets[i]; k < s.adj_offsets[i + 1]; ++k) {
      if (k + kAhead < total)
        __builtin_prefetch(out.data() + static_cast<size_t>(cols[k + kAhead]) * width, 1);
      const float a = vals[k];
      float* o = out.data() + static_cast<size_t>(cols[k]) * width;
      for (size_t j = 0; j < width; ++j) o[j] += a * x[j];
    }
  }
}

void Gcn::Forward(GhostExchange& ghosts, const GraphShard& s, const DropoutDraw& dropout) {
  dropout_ = dropout;
  LocalTensorOps local(s, shapes_);
  TensorOps& ops = remote_ ? *remote_ : local;
  ops.SetParameters(params_);
  const size_t n = s.owned.size(), rows = s.local_rows();
  const std::vector<RowRange> owned = pipeline_->Intervals({0, n}), ghost = pipeline_->Intervals({n, rows});
  // The first layer's T on every local row, the ghosts' from their own features: no exchange.
  t_[0].resize(rows * out_width(0));
  const std::vector<RowRange> all = pipeline_->Intervals({0, rows});
  pipeline_->RunTensor(all.size(), [&](size_t i) { ops.ProjectFeatures(dropout, all[i], t_[0].data()); });
  for (size_t l = 0; l < layers(); ++l) {
    const size_t out = out_width(l);
    const bool next = l + 1 < layers();
    z_[l].resize(n * out);
    if (next) {
      h_[l + 1].resize(rows * in_width(l + 1));
      t_[l + 1].resize(rows * out_width(l + 1));
    }
    const float* b = params_.data() + bias_offset(l);
    // Graph task: Z = A_hat T + b on an interval's rows; tensor task: the next layer's input H
    // (ReLU, dropout) and T = H W on them.
    pipeline_->Run(
        owned.size(),
        [&](size_t i) {
          Aggregate(s, out, owned[i], t_[l].data(), z_[l].data());
          for (size_t r = owned[i].begin; r < owned[i].end; ++r)
            for (size_t j = 0; j < out; ++j) z_[l][r * out + j] += b[j];
        },
        next ? std::function<void(size_t)>([&](size_t i) {
          ops.ActivateProject(dropout, l + 1, z_[l].data(), owned[i], h_[l + 1].data(), t_[l + 1].data());
        })
             : std::function<void(size_t)>());
    if (!next) break;
    // The ghosts' H comes from their owners; their T is formed here, with this pass's weights, so
    // a stale ghost is stale in its activations only.
    ghosts.Refresh(s, in_width(l + 1), h_[l + 1]);
    pipeline_->RunTensor(ghost.size(),
                         [&](size_t i) { ops.Project(l + 1, h_[l + 1].data(), ghost[i], t_[l + 1].data()); });
  }
}

void Gcn::BackwardByOwners(GhostExchange& ghosts, TensorOps& ops, const GraphShard& s, size_t l, float* gw) {
  const size_t n = s.owned.size(), in = in_width(l), out = out_width(l);
  const std::vector<RowRange> owned = pipeline_->Intervals({0, n});
  // dT = A_hat dZ (A_hat is symmetric) for the owned rows, which reads the ghosts' dZ.
  d_ext_.resize(s.local_rows() * out);
  ghosts.RefreshNow(s, out, d_ext_);
  d_t_.resize(n * out);
  if (l > 0) {
    d_h_.resize(n * in);
    d_below_.resize(n * in);
  }
  std::vector<std::vector<float>> partials(owned.size(), std::vector<float>(in * out, 0.0f));
  pipeline_->Run(
      owned.size(), [&](size_t i) { Aggregate(s, out, owned[i], d_ext_.data(), d_t_.data()); },
      [&](size_t i) {
        ops.BackwardRows(dropout_, l, d_t_.data(), l > 0 ? h_[l].data() : nullptr, owned[i],
                         partials[i].data(), l > 0 ? d_h_.data() : nullptr);
        // Back through dropout (the same mask and scale) and the ReLU to dZ of the layer below.
        if (l > 0)
          ops.ActivateBackward(dropout_, l, z_[l - 1].data(), d_h_.data(), owned[i], d_below_.data());
      });
  AddPartials(partials, gw);
}

void Gcn::BackwardByLocalRows(GhostExchange& ghosts, TensorOps& ops, const GraphShard& s, size_t l,
                              float* gw) {
  const size_t n = s.owned.size(), rows = s.local_rows(), in = in_width(l), out = out_width(l);
  // This rank's part of dT = A_hat' dZ on every local row (a scatter, which intervals cannot
  // split); the weights' gradient is a sum over ranks anyway, and a ghost's part of dH goes to
  // its owner.
  d_t_.resize(rows * out);
  AggregateTransposed(s, out, std::span<const float>(d_ext_).first(n * out), d_t_);
  const std::vector<RowRange> local = pipeline_->Intervals({0, rows});
  std::vector<std::vector<float>> partials(local.size(), std::vector<float>(in * out, 0.0f));
  if (l > 0) d_h_.resize(rows * in);
  pipeline_->RunTensor(local.size(), [&](size_t i) {
    ops.BackwardRows(dropout_, l, d_t_.data(), l > 0 ? h_[l].data() : nullptr, local[i], partials[i].data(),
                     l > 0 ? d_h_.data() : nullptr);
  });
  AddPartials(partials, gw);
  if (l == 0) return;
  ghosts.Reduce(s, in, d_h_);
  const std::vector<RowRange> owned = pipeline_->Intervals({0, n});
  d_below_.resize(n * in);
  pipeline_->RunTensor(owned.size(), [&](size_t i) {
    ops.ActivateBackward(dropout_, l, z_[l - 1].data(), d_h_.data(), owned[i], d_below_.data());
  });
}

void Gcn::Backward(GhostExchange& ghosts, const GraphShard& s, std::span<const float> d_output,
                   std::span<float> grad) {
  const size_t n = s.owned.size();
  if (d_output.size() != n * out_width(layers() - 1) || grad.size() != params_.size())
    throw InternalError("gcn backward: gradient sizes do not match the model");
  LocalTensorOps local(s, shapes_);
  TensorOps& ops = remote_ ? *remote_ : local;
  ops.SetParameters(params_);
  std::fill(grad.begin(), grad.end(), 0.0f);
  d_ext_.assign(d_output.begin(), d_output.end());  // dZ of the top layer, owned rows
  for (size_t l = layers(); l-- > 0;) {
    BiasBackward(d_ext_.data(), n, out_width(l), grad.data() + bias_offset(l));
    float* gw = grad.data() + weight_offset(l);
    if (ghosts.staleness() == 0) {
      BackwardByOwners(ghosts, ops, s, l, gw);
    } else {
      BackwardByLocalRows(ghosts, ops, s, l, gw);
    }
    if (l == 0) break;
    d_ext_.swap(d_below_);  // dZ of the layer below
  }
}

}  // namespace parasol::apps::gnn
