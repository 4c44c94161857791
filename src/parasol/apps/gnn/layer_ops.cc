#include "parasol/apps/gnn/layer_ops.h"

#include <algorithm>
#include <cmath>

namespace parasol::apps::gnn {

DropoutMask::DropoutMask(const DropoutDraw& d, size_t layer)
    : base_(MixKey(d.seed ^ MixKey((d.epoch << 8) | layer))), active_(d.rate > 0) {
  // The least k with k * 2^-24 >= rate (k * 2^-24 is exact in float for k < 2^24).
  threshold_ = static_cast<uint64_t>(std::ceil(static_cast<double>(d.rate) * 0x1p24));
}

void ProjectFeatures(const GraphShard& s, const DropoutDraw& d, const float* w, size_t out, RowRange rows,
                     float* t) {
  const float scale = 1.0f / (1.0f - d.rate);
  const DropoutMask mask(d, 0);
  std::fill(t + rows.begin * out, t + rows.end * out, 0.0f);
  for (size_t i = rows.begin; i < rows.end; ++i) {
    float* ti = t + i * out;
    const uint32_t v = s.global_id(i);
    for (uint64_t k = s.feature_offsets[i]; k < s.feature_offsets[i + 1]; ++k) {
      const uint32_t f = s.feature_ids[k];
      if (mask.active() && !mask.Keep(v, f)) continue;
      const float x = d.rate > 0 ? s.feature_values[k] * scale : s.feature_values[k];
      const float* wf = w + static_cast<size_t>(f) * out;
      for (size_t j = 0; j < out; ++j) ti[j] += x * wf[j];
    }
  }
}

void ProjectFeaturesBackward(const GraphShard& s, const DropoutDraw& d, const float* dt, size_t out,
                             RowRange rows, float* gw) {
  const float scale = 1.0f / (1.0f - d.rate);
  const DropoutMask mask(d, 0);
  for (size_t i = rows.begin; i < rows.end; ++i) {
    const float* dti = dt + i * out;
    const uint32_t v = s.global_id(i);
    for (uint64_t k = s.feature_offsets[i]; k < s.feature_offsets[i + 1]; ++k) {
      const uint32_t f = s.feature_ids[k];
      if (mask.active() && !mask.Keep(v, f)) continue;
      const float x = d.rate > 0 ? s.feature_values[k] * scale : s.feature_values[k];
      float* gf = gw + static_cast<size_t>(f) * out;
      for (size_t j = 0; j < out; ++j) gf[j] += x * dti[j];
    }
  }
}

void ActivateAndDrop(const GraphShard& s, const DropoutDraw& d, size_t layer, Activation act, const float* z,
                     size_t in, RowRange rows, float* h) {
  const float scale = 1.0f / (1.0f - d.rate);
  const DropoutMask mask(d, layer);
  for (size_t i = rows.begin; i < rows.end; ++i) {
    for (size_t c = 0; c < in; ++c) {
      const float x = z[i * in + c];
      float v = act == Activation::kRelu ? std::max(x, 0.0f) : (x > 0 ? x : std::expm1(x));
      // A zero stays zero whatever the mask (ReLU leaves half): no hash for it.
      if (mask.active() && v != 0.0f) v = mask.Keep(s.owned[i], c) ? v * scale : 0.0f;
      h[i * in + c] = v;
    }
  }
}

void ActivateAndDropBackward(const GraphShard& s, const DropoutDraw& d, size_t layer, Activation act,
                             const float* z, const float* dh, size_t in, RowRange rows, float* dz) {
  const float scale = 1.0f / (1.0f - d.rate);
  const DropoutMask mask(d, layer);
  for (size_t i = rows.begin; i < rows.end; ++i) {
    for (size_t c = 0; c < in; ++c) {
      const float x = z[i * in + c];
      const float slope = x > 0 ? 1.0f : (act == Activation::kRelu ? 0.0f : std::exp(x));
      float g = dh[i * in + c] * slope;
      if (mask.active() && g != 0.0f) g = mask.Keep(s.owned[i], c) ? g * scale : 0.0f;
      dz[i * in + c] = g;
    }
  }
}

void Project(const float* h, size_t in, const float* w, size_t out, RowRange rows, float* t) {
  std::fill(t + rows.begin * out, t + rows.end * out, 0.0f);
  for (size_t i = rows.begin; i < rows.end; ++i) {
    float* ti = t + i * out;
    for (size_t c = 0; c < in; ++c) {
      const float x = h[i * in + c];
      if (x == 0.0f) continue;  // ReLU and dropout leave many
      const float* wc = w + c * out;
      for (size_t j = 0; j < out; ++j) ti[j] += x * wc[j];
    }
  }
}

void ProjectBackward(const float* h, size_t in, const float* w, size_t out, const float* dt, RowRange rows,
                     float* gw, float* dh) {
  for (size_t i = rows.begin; i < rows.end; ++i) {
    const float* dti = dt + i * out;
    for (size_t c = 0; c < in; ++c) {
      const float x = h[i * in + c];
      float* gc = gw + c * out;
      const float* wc = w + c * out;
      float g = 0;
      for (size_t j = 0; j < out; ++j) {
        gc[j] += x * dti[j];
        g += wc[j] * dti[j];
      }
      dh[i * in + c] = g;
    }
  }
}

void BiasBackward(const float* dz, size_t n, size_t out, float* gb) {
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < out; ++j) gb[j] += dz[i * out + j];
}

}  // namespace parasol::apps::gnn
