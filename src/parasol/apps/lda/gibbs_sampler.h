// The collapsed Gibbs sampler: a pass over documents that draws each token's topic from its exact
// conditional p(k) ~ (n_dk + alpha_k)(n_wk + beta) / (n_k + V beta), with the word-topic counts
// dense, V rows of Stride(K) counts (CountWords). O(K) a token, in a loop the compiler vectorises:
// at small K its sweep costs about what an MH sweep does and mixes better (docs/lda.md), so
// `--sampler auto` takes it there; the MH sampler's tests compare against it. One process only.
//
// Threading: one GibbsSampler per thread; threads work on tiles of distinct document and word
// groups (token_layout.h), so they share no document, word row or token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/lda/lda_params.h"
#include "parasol/apps/lda/token_layout.h"
#include "parasol/core/huge_page_allocator.h"
#include "parasol/core/rng.h"

namespace parasol::apps::lda {

class GibbsSampler {
 public:
  explicit GibbsSampler(const LdaParams& params);

  void BeginRound(std::span<const int64_t> totals);
  std::vector<int64_t> TotalsDelta() const;
  // Counts a word's row holds: K rounded up to whole blocks of the draw's search (the rest stay 0).
  static size_t Stride(uint32_t topics);
  // The word-topic counts of the layout's tokens, word w's row at w * Stride(topics). On huge pages:
  // a token's row is read at random (20 M tokens, K = 100: 1.05-1.11x a pass, K = 256: 1.21x).
  static HugePageVector<int32_t> CountWords(const TokenLayout& layout, uint32_t topics);
  // The documents of `doc_group`, their tokens in `word_group`; `nwk` holds every count (CountWords).
  void DocPass(TokenLayout& layout, uint32_t doc_group, uint32_t word_group, std::span<int32_t> nwk,
               Rng& rng);

 private:
  // A topic drawn from the conditional with the word's row `nwk` (the token's own count out) and u
  // uniform in [0, 1).
  uint32_t Draw(const int32_t* nwk, double u);
  // DocPass over the layout's topics as their stored type Z.
  template <typename Z>
  void DocPass(const TokenLayout& layout, Z* dz, Z* wz, uint32_t doc_group, uint32_t word_group,
               std::span<int32_t> nwk, Rng& rng);
  // The inverses of n_k + V beta and n_k - 1 + V beta, from n_k.
  void Invert(uint32_t k) {
    const double n = static_cast<double>(nk_[k]) + vbeta_;
    inv_nk_[k] = static_cast<float>(1.0 / n);
    inv_less_[k] = static_cast<float>(1.0 / (n - 1));
  }
  void AddTotal(uint32_t k, int64_t delta) {
    nk_[k] += delta;
    Invert(k);
  }

  float DocFactor(uint32_t k, float inv) const { return (static_cast<float>(ndk_[k]) + alpha_[k]) * inv; }

  LdaParams p_;
  uint32_t padded_;  // Stride(K)
  float beta_;
  double vbeta_;
  std::vector<int32_t> ndk_;
  std::vector<int64_t> nk_, start_;
  // Per topic: alpha_k, 1 / (n_k + V beta), 1 / (n_k - 1 + V beta) (the first with a token taken
  // out: no division waits before a draw), the document's factor (n_dk + alpha_k) / (n_k + V beta)
  // (DocFactor; kept as tokens move, so that a draw reads one array beside the word's row), the
  // draw's weights.
  std::vector<float> alpha_, inv_nk_, inv_less_, doc_, weights_;
};

}  // namespace parasol::apps::lda
