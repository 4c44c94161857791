// The plain collapsed Gibbs sampler (O(K) per token), the reference the MH sampler is tested
// against: a pass over documents that draws each token's topic from its exact conditional, with
// the word-topic counts in a WordTopicTable. One process only.
//
// Threading: one GibbsSampler per thread; threads work on tiles of distinct document and word
// groups (token_layout.h), so they share no document, word row or token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/lda/lda_params.h"
#include "parasol/apps/lda/token_layout.h"
#include "parasol/apps/lda/word_topic.h"
#include "parasol/core/rng.h"

namespace parasol::apps::lda {

class GibbsSampler {
 public:
  explicit GibbsSampler(const LdaParams& params);

  void BeginRound(std::span<const int64_t> totals);
  std::vector<int64_t> TotalsDelta() const;
  // The documents of `doc_group`, their tokens in `word_group`; `table` holds every count.
  void DocPass(TokenLayout& layout, uint32_t doc_group, uint32_t word_group, WordTopicTable& table, Rng& rng);

 private:
  LdaParams p_;
  double vbeta_;
  std::vector<int32_t> ndk_;
  std::vector<int64_t> nk_, start_;
  std::vector<int32_t> wrow_;
  std::vector<double> cumulative_;
};

}  // namespace parasol::apps::lda
