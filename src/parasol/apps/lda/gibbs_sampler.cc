#include "parasol/apps/lda/gibbs_sampler.h"

#include <algorithm>

namespace parasol::apps::lda {

GibbsSampler::GibbsSampler(const LdaParams& params)
    : p_(params),
      vbeta_(params.beta * params.vocab_size),
      ndk_(params.topics, 0),
      wrow_(params.topics, 0),
      cumulative_(params.topics) {}

void GibbsSampler::BeginRound(std::span<const int64_t> totals) {
  nk_.assign(totals.begin(), totals.end());
  start_ = nk_;
}

std::vector<int64_t> GibbsSampler::TotalsDelta() const {
  std::vector<int64_t> d(nk_.size());
  for (size_t k = 0; k < d.size(); ++k) d[k] = nk_[k] - start_[k];
  return d;
}

void GibbsSampler::DocPass(TokenLayout& layout, uint32_t doc_group, uint32_t word_group,
                           WordTopicTable& table, Rng& rng) {
  uint32_t* dz = layout.doc_topics();
  uint32_t* wz = layout.word_topics();
  const uint32_t* words = layout.doc_words();
  const uint32_t* cross = layout.doc_cross();
  const uint32_t k = p_.topics;
  for (size_t d = layout.group_doc_begin(doc_group); d < layout.group_doc_end(doc_group); ++d) {
    const uint32_t b = layout.doc_group_begin(d, word_group), e = layout.doc_group_end(d, word_group);
    if (b == e) continue;
    for (uint32_t i = layout.doc_begin(d); i < layout.doc_end(d); ++i) ++ndk_[dz[i]];
    for (uint32_t i = b; i < e; ++i) {
      const uint32_t w = words[i], s0 = dz[i];
      table.ForEachNonzero(w, [&](uint32_t t, int32_t c) { wrow_[t] = c; });
      --wrow_[s0], --ndk_[s0], --nk_[s0];  // the token's own counts out
      double sum = 0;
      for (uint32_t t = 0; t < k; ++t) {
        sum += (ndk_[t] + p_.Alpha(t)) * (wrow_[t] + p_.beta) / (static_cast<double>(nk_[t]) + vbeta_);
        cumulative_[t] = sum;
      }
      const double u = rng.Uniform() * sum;
      const uint32_t s = std::min<uint32_t>(
          k - 1, static_cast<uint32_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                       cumulative_.begin()));
      ++ndk_[s], ++nk_[s];
      if (s != s0) {
        dz[i] = s;
        wz[cross[i]] = s;
        table.Dec(w, s0);
        table.Inc(w, s);
      }
      table.ForEachNonzero(w, [&](uint32_t t, int32_t) { wrow_[t] = 0; });
      wrow_[s0] = 0;
    }
    for (uint32_t i = layout.doc_begin(d); i < layout.doc_end(d); ++i) ndk_[dz[i]] = 0;
  }
}

}  // namespace parasol::apps::lda
