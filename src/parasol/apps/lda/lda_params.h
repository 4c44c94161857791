// The model's hyper-parameters and the sampler's knobs, shared by training and folding in.
#pragma once

#include <cstdint>
#include <vector>

namespace parasol::apps::lda {

// kAuto: the trainer picks (ChooseSampler in lda_trainer.h).
enum class SamplerKind { kMh, kGibbs, kAuto };

// The most topics a model may have (a model file asking for more is refused before allocating).
inline constexpr uint32_t kMaxTopics = 1u << 20;

struct LdaParams {
  uint32_t topics = 100;
  double alpha = 0.5;  // per topic
  // One alpha per topic once hyperparameter optimisation has fitted them (dirichlet_fit.h);
  // empty: `alpha` for every topic.
  std::vector<double> topic_alpha;
  double beta = 0.01;  // per word
  uint32_t vocab_size = 0;
  uint32_t mh_steps = 2;  // word + doc proposal pairs per token
  SamplerKind sampler = SamplerKind::kMh;

  double Alpha(uint32_t k) const { return topic_alpha.empty() ? alpha : topic_alpha[k]; }
  std::vector<double> Alphas() const {
    return topic_alpha.empty() ? std::vector<double>(topics, alpha) : topic_alpha;
  }
  double AlphaSum() const {
    if (topic_alpha.empty()) return topics * alpha;
    double sum = 0;
    for (double a : topic_alpha) sum += a;
    return sum;
  }
};

}  // namespace parasol::apps::lda
