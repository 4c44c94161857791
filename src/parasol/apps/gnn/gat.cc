#include "parasol/apps/gnn/gat.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

namespace {

constexpr float kNegativeSlope = 0.2f;  // the paper's LeakyReLU
// Attention dropout draws its masks as layer (kAttentionLayer + l), apart from the inputs'.
constexpr size_t kAttentionLayer = 128;

float Dot(const float* a, const float* b, size_t n) {
  float sum = 0;
  for (size_t j = 0; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

}  // namespace

Gat::Gat(size_t features, std::vector<size_t> hidden, size_t classes)
    : GnnModel(features, hidden, classes, /*vectors=*/3) {
  layers_.resize(layers());
}

void Gat::InitGlorot(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::fill(params_.begin(), params_.end(), 0.0f);
  for (size_t l = 0; l < layers(); ++l) {
    FillGlorot(&rng, in_width(l), out_width(l), params_.data() + weight_offset(l));
    // Each attention vector as a 1 x out matrix.
    FillGlorot(&rng, 1, out_width(l), params_.data() + attention_offset(l));
    FillGlorot(&rng, 1, out_width(l), params_.data() + attention_offset(l) + out_width(l));
  }
}

float Gat::AttentionKeep(const GraphShard& s, size_t l, size_t i, uint64_t k) const {
  if (dropout_.rate <= 0) return 1.0f;
  const bool keep = KeepEntry(dropout_, kAttentionLayer + l, s.owned[i], s.global_id(s.adj_columns[k]));
  return keep ? 1.0f / (1.0f - dropout_.rate) : 0.0f;
}

void Gat::Forward(GhostExchange& ghosts, const GraphShard& s, const DropoutDraw& dropout) {
  dropout_ = dropout;
  const size_t n = s.owned.size();
  for (size_t l = 0; l < layers(); ++l) {
    const size_t in = in_width(l), out = out_width(l);
    LayerState& ls = layers_[l];
    const float* w = params_.data() + weight_offset(l);
    ls.t.resize(s.local_rows() * out);  // the ghost rows are filled by the refresh
    if (l == 0) {
      ProjectFeatures(s, dropout, w, out, {0, n}, ls.t.data());
    } else {
      ls.h.resize(n * in);
      ActivateAndDrop(s, dropout, l, Activation::kElu, layers_[l - 1].z.data(), in, {0, n}, ls.h.data());
      Project(ls.h.data(), in, w, out, {0, n}, ls.t.data());
    }
    ghosts.Refresh(s, out, ls.t);
    Attend(s, l);
  }
}

void Gat::Attend(const GraphShard& s, size_t l) {
  const size_t n = s.owned.size(), out = out_width(l);
  LayerState& ls = layers_[l];
  const float* a_src = params_.data() + attention_offset(l);
  const float* a_dst = a_src + out;
  const float* b = params_.data() + bias_offset(l);
  ls.score.resize(s.local_rows());
  for (size_t j = 0; j < s.local_rows(); ++j) ls.score[j] = Dot(&ls.t[j * out], a_src, out);
  ls.self.resize(n);
  ls.alpha.resize(s.adj_columns.size());
  ls.z.resize(n * out);
  for (size_t i = 0; i < n; ++i) {
    ls.self[i] = Dot(&ls.t[i * out], a_dst, out);
    const uint64_t begin = s.adj_offsets[i], end = s.adj_offsets[i + 1];
    float top = -INFINITY;
    for (uint64_t k = begin; k < end; ++k) {
      const float u = ls.self[i] + ls.score[s.adj_columns[k]];
      ls.alpha[k] = u > 0 ? u : kNegativeSlope * u;
      top = std::max(top, ls.alpha[k]);
    }
    float total = 0;
    for (uint64_t k = begin; k < end; ++k) total += ls.alpha[k] = std::exp(ls.alpha[k] - top);
    float* zi = &ls.z[i * out];
    std::copy(b, b + out, zi);
    for (uint64_t k = begin; k < end; ++k) {
      ls.alpha[k] /= total;
      const float a = ls.alpha[k] * AttentionKeep(s, l, i, k);
      if (a == 0) continue;
      const float* tj = &ls.t[static_cast<size_t>(s.adj_columns[k]) * out];
      for (size_t c = 0; c < out; ++c) zi[c] += a * tj[c];
    }
  }
}

void Gat::AttendBackward(GhostExchange& ghosts, const GraphShard& s, size_t l, float* grad) {
  const size_t n = s.owned.size(), out = out_width(l), width = out + 1;
  const LayerState& ls = layers_[l];
  // Per local row: dT (out columns) then the gradient of its score a_src . T_j.
  d_local_.assign(s.local_rows() * width, 0.0f);
  std::vector<float> d_self(n, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    const float* dzi = &d_ext_[i * out];
    const uint64_t begin = s.adj_offsets[i], end = s.adj_offsets[i + 1];
    d_alpha_.resize(end - begin);
    float weighted = 0;  // sum over k of alpha_k d_alpha_k
    for (uint64_t k = begin; k < end; ++k) {
      const size_t j = s.adj_columns[k];
      const float keep = AttentionKeep(s, l, i, k);
      float* dj = &d_local_[j * width];
      const float a = ls.alpha[k] * keep;
      for (size_t c = 0; c < out; ++c) dj[c] += a * dzi[c];
      const float da = keep == 0 ? 0.0f : keep * Dot(dzi, &ls.t[j * out], out);
      d_alpha_[k - begin] = da;
      weighted += ls.alpha[k] * da;
    }
    for (uint64_t k = begin; k < end; ++k) {
      const size_t j = s.adj_columns[k];
      const float de = ls.alpha[k] * (d_alpha_[k - begin] - weighted);  // through the softmax
      const float du = ls.self[i] + ls.score[j] > 0 ? de : kNegativeSlope * de;
      d_self[i] += du;
      d_local_[j * width + out] += du;
    }
  }
  ghosts.Reduce(s, width, d_local_);
  const float* a_src = params_.data() + attention_offset(l);
  const float* a_dst = a_src + out;
  float* g_src = grad + attention_offset(l);
  float* g_dst = g_src + out;
  d_t_.resize(n * out);
  for (size_t i = 0; i < n; ++i) {
    const float* ti = &ls.t[i * out];
    const float d_score = d_local_[i * width + out];
    for (size_t c = 0; c < out; ++c) {
      d_t_[i * out + c] = d_local_[i * width + c] + d_score * a_src[c] + d_self[i] * a_dst[c];
      g_src[c] += d_score * ti[c];
      g_dst[c] += d_self[i] * ti[c];
    }
  }
}

void Gat::Backward(GhostExchange& ghosts, const GraphShard& s, std::span<const float> d_output,
                   std::span<float> grad) {
  const size_t n = s.owned.size();
  if (d_output.size() != n * out_width(layers() - 1) || grad.size() != params_.size())
    throw InternalError("gat backward: gradient sizes do not match the model");
  std::fill(grad.begin(), grad.end(), 0.0f);
  d_ext_.assign(d_output.begin(), d_output.end());  // dZ of the top layer, owned rows
  for (size_t l = layers(); l-- > 0;) {
    const size_t in = in_width(l), out = out_width(l);
    BiasBackward(d_ext_.data(), n, out, grad.data() + bias_offset(l));
    AttendBackward(ghosts, s, l, grad.data());
    float* gw = grad.data() + weight_offset(l);
    if (l == 0) {
      ProjectFeaturesBackward(s, dropout_, d_t_.data(), out, {0, n}, gw);
      break;
    }
    d_h_.resize(n * in);
    ProjectBackward(layers_[l].h.data(), in, params_.data() + weight_offset(l), out, d_t_.data(), {0, n}, gw,
                    d_h_.data());
    d_ext_.resize(n * in);
    ActivateAndDropBackward(s, dropout_, l, Activation::kElu, layers_[l - 1].z.data(), d_h_.data(), in,
                            {0, n}, d_ext_.data());
  }
}

}  // namespace parasol::apps::gnn
