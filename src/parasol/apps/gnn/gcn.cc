#include "parasol/apps/gnn/gcn.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

Gcn::Gcn(size_t features, std::vector<size_t> hidden, size_t classes) {
  widths_.push_back(features);
  widths_.insert(widths_.end(), hidden.begin(), hidden.end());
  widths_.push_back(classes);
  size_t total = 0;
  for (size_t l = 0; l < layers(); ++l) {
    offsets_.push_back(total);
    total += in_width(l) * out_width(l) + out_width(l);
  }
  params_.assign(total, 0.0f);
  h_.resize(layers());
  t_.resize(layers());
  z_.resize(layers());
}

void Gcn::InitGlorot(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::fill(params_.begin(), params_.end(), 0.0f);
  for (size_t l = 0; l < layers(); ++l) FillGlorot(&rng, in_width(l), out_width(l), params_.data() + weight_offset(l));
}

namespace {

// out row i = sum over row i's entries a_ik in[column k] for columns [c0, c0 + w), w <= W (W when
// kFixed: the loops unrolled): the sum is kept in registers and the rows ahead are prefetched,
// since the neighbours' rows are scattered over memory (the cost is the misses).
template <size_t W, bool kFixed>
void AggregateColumns(const GraphShard& s, size_t width, size_t c0, size_t w, const float* in, float* out) {
  constexpr uint64_t kAhead = 8;
  const uint32_t* cols = s.adj_columns.data();
  const float* vals = s.adj_values.data();
  const uint64_t total = s.adj_columns.size();
  for (size_t i = 0; i < s.owned.size(); ++i) {
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

}  // namespace

void Gcn::Aggregate(const GraphShard& s, size_t width, std::span<const float> in,
                    std::span<float> out) const {
  size_t c0 = 0;
  for (; c0 + 16 <= width; c0 += 16) AggregateColumns<16, true>(s, width, c0, 16, in.data(), out.data());
  if (c0 < width) AggregateColumns<16, false>(s, width, c0, width - c0, in.data(), out.data());
}

void Gcn::Forward(GhostExchange& ghosts, const GraphShard& s, const DropoutDraw& dropout) {
  dropout_ = dropout;
  const size_t n = s.owned.size(), rows = s.local_rows();
  for (size_t l = 0; l < layers(); ++l) {
    const size_t in = in_width(l), out = out_width(l);
    const float* w = params_.data() + weight_offset(l);
    std::vector<float>& t = t_[l];
    t.resize(rows * out);
    if (l == 0) {
      // The ghosts' rows too, from their features: the first layer exchanges nothing.
      ProjectFeatures(s, dropout, w, out, t.data(), rows);
    } else {
      // The layer's input (after ReLU and dropout) of the ghosts comes from their owners; their
      // product with this layer's weights is computed here, with the weights of this pass.
      h_[l].resize(rows * in);
      ActivateAndDrop(s, dropout, l, Activation::kRelu, z_[l - 1], in, &h_[l]);
      ghosts.Refresh(s, in, h_[l]);
      Project(h_[l], rows, in, w, out, t.data());
    }
    z_[l].resize(n * out);
    Aggregate(s, out, t, z_[l]);
    const float* b = params_.data() + bias_offset(l);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < out; ++j) z_[l][i * out + j] += b[j];
  }
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
      if (k + kAhead < total) __builtin_prefetch(out.data() + static_cast<size_t>(cols[k + kAhead]) * width, 1);
      const float a = vals[k];
      float* o = out.data() + static_cast<size_t>(cols[k]) * width;
      for (size_t j = 0; j < width; ++j) o[j] += a * x[j];
    }
  }
}

void Gcn::BackwardByOwners(GhostExchange& ghosts, const GraphShard& s, size_t l, float* gw) {
  const size_t n = s.owned.size(), in = in_width(l), out = out_width(l);
  // dT = A_hat dZ (A_hat is symmetric) for the owned rows, which reads the ghosts' dZ.
  d_ext_.resize(s.local_rows() * out);
  ghosts.RefreshNow(s, out, d_ext_);
  d_t_.resize(n * out);
  Aggregate(s, out, d_ext_, d_t_);
  if (l == 0) {
    ProjectFeaturesBackward(s, dropout_, d_t_.data(), out, gw, n);
  } else {
    ProjectBackward(h_[l], n, in, params_.data() + weight_offset(l), out, d_t_.data(), gw, &d_h_);
  }
}

void Gcn::BackwardByLocalRows(GhostExchange& ghosts, const GraphShard& s, size_t l, float* gw) {
  const size_t rows = s.local_rows(), in = in_width(l), out = out_width(l);
  // This rank's part of dT = A_hat' dZ on every local row; the weights' gradient is a sum over
  // ranks anyway, and a ghost's part of dH goes to its owner.
  d_t_.resize(rows * out);
  AggregateTransposed(s, out, d_ext_, d_t_);
  if (l == 0) {
    ProjectFeaturesBackward(s, dropout_, d_t_.data(), out, gw, rows);
  } else {
    ProjectBackward(h_[l], rows, in, params_.data() + weight_offset(l), out, d_t_.data(), gw, &d_h_);
    ghosts.Reduce(s, in, d_h_);
  }
}

void Gcn::Backward(GhostExchange& ghosts, const GraphShard& s, std::span<const float> d_output,
                   std::span<float> grad) {
  const size_t n = s.owned.size();
  if (d_output.size() != n * out_width(layers() - 1) || grad.size() != params_.size())
    throw InternalError("gcn backward: gradient sizes do not match the model");
  std::fill(grad.begin(), grad.end(), 0.0f);
  d_ext_.assign(d_output.begin(), d_output.end());  // dZ of the top layer, owned rows
  for (size_t l = layers(); l-- > 0;) {
    BiasBackward(d_ext_.data(), n, out_width(l), grad.data() + bias_offset(l));
    float* gw = grad.data() + weight_offset(l);
    if (ghosts.staleness() == 0) {
      BackwardByOwners(ghosts, s, l, gw);
    } else {
      BackwardByLocalRows(ghosts, s, l, gw);
    }
    if (l == 0) break;
    // Back through dropout (the same mask and scale) and the ReLU to dZ of the layer below.
    ActivateAndDropBackward(s, dropout_, l, Activation::kRelu, z_[l - 1], d_h_, in_width(l), &d_ext_);
  }
}

}  // namespace parasol::apps::gnn
