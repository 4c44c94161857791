// The model's hyper-parameters and the sampler's knobs, shared by training and folding in.
#pragma once

#include <cstdint>

namespace parasol::apps::lda {

enum class SamplerKind { kMh, kGibbs };

// The most topics a model may have (a model file asking for more is refused before allocating).
inline constexpr uint32_t kMaxTopics = 1u << 20;

struct LdaParams {
  uint32_t topics = 100;
  double alpha = 0.5;  // per topic
  double beta = 0.01;  // per word
  uint32_t vocab_size = 0;
  uint32_t mh_steps = 2;  // word + doc proposal pairs per token
  SamplerKind sampler = SamplerKind::kMh;
};

}  // namespace parasol::apps::lda
