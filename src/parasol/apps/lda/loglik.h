// The collapsed joint log-likelihood log p(w, z) of LDA, the figure WarpLDA and LightLDA print:
//   documents: sum_d [lgamma(a_0) - lgamma(N_d + a_0) + sum_k lgamma(n_dk + a_k) - lgamma(a_k)],
//              a_0 = sum_k a_k (a_k = a for every topic unless alpha was optimised)
//   words:     K [lgamma(V b) - V lgamma(b)] + sum_wk lgamma(n_wk + b) - sum_k lgamma(n_k + V b)
// computed over nonzero counts only (a zero count adds lgamma(a) - lgamma(a) = 0 to the sums).
// Parts are additive, so ranks and threads each compute theirs and the trainer sums them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/lda/lda_params.h"
#include "parasol/apps/lda/token_layout.h"
#include "parasol/apps/lda/word_topic.h"

namespace parasol::apps::lda {

// Calls fn(topic, count) for the nonzero counts of the topics z[b .. e), leaving `scratch` (K
// zeros on entry) zeroed. `z`: an array of topics, or a view with z[i].
template <typename Z, typename Fn>
void ForEachTopicCount(const Z& z, uint32_t b, uint32_t e, std::vector<int32_t>& scratch, Fn&& fn) {
  for (uint32_t i = b; i < e; ++i) ++scratch[z[i]];
  for (uint32_t i = b; i < e; ++i) {
    int32_t& c = scratch[z[i]];
    if (c != 0) fn(z[i], c), c = 0;
  }
}

class LogLikelihood {
 public:
  explicit LogLikelihood(const LdaParams& params);
  // Documents [d0, d1) of the layout. `scratch`: K zeros on entry and on return.
  double DocPart(const TokenLayout& layout, size_t d0, size_t d1, std::vector<int32_t>& scratch) const;
  // sum over nonzero n_wk of lgamma(n_wk + b) - lgamma(b), for words [w0, w1) counted from the
  // layout (one process: its tokens are all tokens). `scratch` as above.
  double WordsPart(const TokenLayout& layout, uint32_t w0, uint32_t w1, std::vector<int32_t>& scratch) const;
  // The same for one word whose tokens' topics are topics[begin, end) (an array, or a view as
  // ForEachTopicCount takes).
  template <typename Z>
  double WordPart(const Z& topics, uint32_t begin, uint32_t end, std::vector<int32_t>& scratch) const {
    double sum = 0;
    ForEachTopicCount(topics, begin, end, scratch, [&](uint32_t, int32_t c) { sum += LgammaBeta(c); });
    return sum;
  }
  // sum over nonzero n_wk of lgamma(n_wk + b) - lgamma(b), for `words` (resident rows).
  double WordRowsPart(const WordTopicTable& table, std::span<const uint32_t> words) const;
  // One row given as (topic, count) pairs: for rows read from the parameter server.
  double WordEntry(int64_t count) const { return LgammaBeta(count); }
  // K lgamma(V b) - sum_k lgamma(n_k + V b).
  double TotalsPart(std::span<const int64_t> totals) const;

 private:
  double LgammaAlpha(int64_t n) const;  // lgamma(n + a) - lgamma(a), symmetric alpha
  double LgammaBeta(int64_t n) const;   // lgamma(n + b) - lgamma(b)

  LdaParams p_;
  std::vector<double> alpha_table_, beta_table_;
  std::vector<double> lgamma_topic_alpha_;  // lgamma(a_k), asymmetric alpha
};

}  // namespace parasol::apps::lda
