#include "parasol/apps/gnn/gcn.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "parasol/core/error.h"
#include "parasol/ps/flat_map.h"

namespace parasol::apps::gnn {

bool KeepEntry(const DropoutDraw& d, size_t layer, uint64_t vertex, uint64_t column) {
  const uint64_t base = ps::MixKey(d.seed ^ ps::MixKey((d.epoch << 8) | layer));
  const uint64_t h = ps::MixKey(base ^ ((vertex << 24) + column));
  // The top 24 bits as a fraction in [0, 1).
  return static_cast<float>(h >> 40) * 0x1p-24f >= d.rate;
}

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
  for (size_t l = 0; l < layers(); ++l) {
    const double range = std::sqrt(6.0 / static_cast<double>(in_width(l) + out_width(l)));
    float* w = params_.data() + weight_offset(l);
    for (size_t i = 0; i < in_width(l) * out_width(l); ++i) {
      const double u = static_cast<double>(rng() >> 11) * 0x1p-53;  // [0, 1), the same on every platform
      w[i] = static_cast<float>((2 * u - 1) * range);
    }
  }
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

void Gcn::Forward(comm::Context& ctx, const GraphShard& s, const DropoutDraw& dropout) {
  dropout_ = dropout;
  const size_t n = s.owned.size();
  const float scale = 1.0f / (1.0f - dropout.rate);
  for (size_t l = 0; l < layers(); ++l) {
    const size_t in = in_width(l), out = out_width(l);
    const float* w = params_.data() + weight_offset(l);
    std::vector<float>& t = t_[l];
    t.assign(s.local_rows() * out, 0.0f);
    if (l == 0) {
      for (size_t i = 0; i < n; ++i) {
        float* ti = t.data() + i * out;
        for (uint64_t k = s.feature_offsets[i]; k < s.feature_offsets[i + 1]; ++k) {
          const uint32_t f = s.feature_ids[k];
          if (dropout.rate > 0 && !KeepEntry(dropout, 0, s.owned[i], f)) continue;
          const float x = dropout.rate > 0 ? s.feature_values[k] * scale : s.feature_values[k];
          const float* wf = w + static_cast<size_t>(f) * out;
          for (size_t j = 0; j < out; ++j) ti[j] += x * wf[j];
        }
      }
    } else {
      // H = dropout(ReLU(Z of the layer below)).
      std::vector<float>& h = h_[l];
      const std::vector<float>& below = z_[l - 1];
      h.resize(n * in);
      for (size_t i = 0; i < n; ++i) {
        for (size_t c = 0; c < in; ++c) {
          float v = std::max(below[i * in + c], 0.0f);
          if (dropout.rate > 0) v = KeepEntry(dropout, l, s.owned[i], c) ? v * scale : 0.0f;
          h[i * in + c] = v;
        }
      }
      for (size_t i = 0; i < n; ++i) {
        float* ti = t.data() + i * out;
        for (size_t c = 0; c < in; ++c) {
          const float x = h[i * in + c];
          if (x == 0.0f) continue;
          const float* wc = w + c * out;
          for (size_t j = 0; j < out; ++j) ti[j] += x * wc[j];
        }
      }
    }
    ghost_bytes_sent_ += RefreshGhosts(ctx, s, out, t, &scratch_);
    z_[l].resize(n * out);
    Aggregate(s, out, t, z_[l]);
    const float* b = params_.data() + bias_offset(l);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < out; ++j) z_[l][i * out + j] += b[j];
  }
}

void Gcn::Backward(comm::Context& ctx, const GraphShard& s, std::span<const float> d_output,
                   std::span<float> grad) {
  const size_t n = s.owned.size();
  if (d_output.size() != n * out_width(layers() - 1) || grad.size() != params_.size())
    throw InternalError("gcn backward: gradient sizes do not match the model");
  std::fill(grad.begin(), grad.end(), 0.0f);
  const float scale = 1.0f / (1.0f - dropout_.rate);
  d_ext_.assign(d_output.begin(), d_output.end());  // dZ of the top layer, owned rows
  for (size_t l = layers(); l-- > 0;) {
    const size_t in = in_width(l), out = out_width(l);
    float* gb = grad.data() + bias_offset(l);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < out; ++j) gb[j] += d_ext_[i * out + j];
    // dT = A_hat dZ (A_hat is symmetric), which reads the ghosts' dZ.
    d_ext_.resize(s.local_rows() * out);
    ghost_bytes_sent_ += RefreshGhosts(ctx, s, out, d_ext_, &scratch_);
    d_t_.resize(n * out);
    Aggregate(s, out, d_ext_, d_t_);
    float* gw = grad.data() + weight_offset(l);
    if (l == 0) {
      for (size_t i = 0; i < n; ++i) {
        const float* dti = d_t_.data() + i * out;
        for (uint64_t k = s.feature_offsets[i]; k < s.feature_offsets[i + 1]; ++k) {
          const uint32_t f = s.feature_ids[k];
          if (dropout_.rate > 0 && !KeepEntry(dropout_, 0, s.owned[i], f)) continue;
          const float x = dropout_.rate > 0 ? s.feature_values[k] * scale : s.feature_values[k];
          float* gf = gw + static_cast<size_t>(f) * out;
          for (size_t j = 0; j < out; ++j) gf[j] += x * dti[j];
        }
      }
      break;
    }
    const std::vector<float>& h = h_[l];
    const float* w = params_.data() + weight_offset(l);
    d_h_.assign(n * in, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      const float* dti = d_t_.data() + i * out;
      for (size_t c = 0; c < in; ++c) {
        const float x = h[i * in + c];
        float* gc = gw + c * out;
        const float* wc = w + c * out;
        float dh = 0;
        for (size_t j = 0; j < out; ++j) {
          gc[j] += x * dti[j];
          dh += wc[j] * dti[j];
        }
        d_h_[i * in + c] = dh;
      }
    }
    // Back through dropout (the same mask and scale) and the ReLU to dZ of the layer below.
    const std::vector<float>& below = z_[l - 1];
    d_ext_.resize(n * in);
    for (size_t i = 0; i < n; ++i) {
      for (size_t c = 0; c < in; ++c) {
        float d = below[i * in + c] > 0 ? d_h_[i * in + c] : 0.0f;
        if (dropout_.rate > 0) d = KeepEntry(dropout_, l, s.owned[i], c) ? d * scale : 0.0f;
        d_ext_[i * in + c] = d;
      }
    }
  }
}

}  // namespace parasol::apps::gnn
