#include "parasol/apps/lda/fold_in_sampler.h"

#include <algorithm>

namespace parasol::apps::lda {

TokenStore TokenStore::Build(const Corpus& corpus, uint32_t num_topics, Rng& rng) {
  TokenStore ts;
  ts.doc_offsets = corpus.doc_offsets;
  ts.words = corpus.words;
  ts.z.resize(ts.words.size());
  for (uint32_t& t : ts.z) t = rng.Below(num_topics);
  return ts;
}

std::vector<std::pair<uint32_t, uint32_t>> TokenStore::TopicCounts(size_t d,
                                                                   std::vector<uint32_t>& scratch) const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint64_t i = doc_offsets[d]; i < doc_offsets[d + 1]; ++i) ++scratch[z[i]];
  for (uint64_t i = doc_offsets[d]; i < doc_offsets[d + 1]; ++i) {
    if (scratch[z[i]] != 0) out.emplace_back(z[i], scratch[z[i]]), scratch[z[i]] = 0;
  }
  std::sort(out.begin(), out.end());
  return out;
}

FoldInSampler::FoldInSampler(const LdaParams& params, const WordTopicTable& table,
                             std::span<const int64_t> totals, std::span<const uint32_t> words)
    : p_(params),
      vbeta_(params.beta * params.vocab_size),
      ndk_(params.topics, 0),
      nk_(totals.begin(), totals.end()),
      word_alias_(params.vocab_size) {
  const uint32_t k = p_.topics;
  for (uint32_t t = 0; t < k; ++t) alpha_.push_back(p_.Alpha(t));
  std::vector<uint32_t> topics(k);
  std::vector<double> weights(k);
  AliasScratch scratch;
  for (uint32_t t = 0; t < k; ++t) topics[t] = t;
  if (!p_.topic_alpha.empty()) topics_per_alpha_ = k / BuildAlias(topics, alpha_, alpha_alias_, scratch);
  // The smoothing part, shared by all words.
  for (uint32_t t = 0; t < k; ++t) weights[t] = p_.beta / (static_cast<double>(nk_[t]) + vbeta_);
  smooth_mass_ = BuildAlias(topics, weights, smooth_, scratch);
  std::vector<std::pair<uint32_t, int32_t>> pairs(table.max_slots());
  for (uint32_t w : words) {
    WordAlias& a = word_alias_[w];
    a = WordAlias{static_cast<uint32_t>(arena_.size()), 0, 0.0};
    if (!table.resident(w)) continue;
    const size_t n = table.CopyNonzero(w, pairs.data());
    if (n == 0) continue;
    topics.clear();
    weights.clear();
    for (size_t j = 0; j < n; ++j) {
      const auto [t, c] = pairs[j];
      topics.push_back(t);
      weights.push_back(c / (static_cast<double>(nk_[t]) + vbeta_));
    }
    a.size = static_cast<uint32_t>(topics.size());
    a.mass = BuildAlias(topics, weights, arena_, scratch);
  }
}

void FoldInSampler::Sample(TokenStore& ts, size_t d0, size_t d1, const WordTopicTable& table, Rng& rng) {
  for (size_t d = d0; d < d1; ++d) {
    const uint64_t base = ts.doc_offsets[d];
    const auto size = static_cast<uint32_t>(ts.doc_offsets[d + 1] - base);
    if (size == 0) continue;
    const DocTokens doc{ts.z.data() + base, ts.words.data() + base, size, 0, size};
    for (uint32_t i = 0; i < doc.size; ++i) ++ndk_[doc.z[i]];  // the document's counts, kept current
    SampleDoc(doc, table, rng);
    for (uint32_t i = 0; i < doc.size; ++i) ndk_[doc.z[i]] = 0;
  }
}

inline uint32_t FoldInSampler::DrawWordProposal(uint32_t w, Rng& rng, uint64_t r) const {
  const WordAlias& a = word_alias_[w];
  // The word's table or the shared one: for rare words nearly a coin flip, so selected, not branched.
  const bool own = rng.Uniform() * (a.mass + smooth_mass_) < a.mass;
  const AliasEntry* alias = own ? arena_.data() + a.offset : smooth_.data();
  const uint32_t size = own ? a.size : static_cast<uint32_t>(smooth_.size());
  return DrawAlias(alias, size, r);
}

// The topic of token floor(u) of the document when u < nd (token i, the one being sampled, at its
// current topic s), else one drawn from u - nd, uniform in [0, sum alpha): uniform for a symmetric
// alpha, by alpha's alias table for an asymmetric one (the entry from its integer part scaled to K,
// the coin from its fraction). Both are computed and one selected (which one is random: a branch
// would mispredict).
inline uint32_t FoldInSampler::DocProposal(const uint32_t* z, uint32_t nd, uint32_t i, uint32_t s,
                                           double u) const {
  const uint32_t at = std::min(static_cast<uint32_t>(u), nd - 1);
  const uint32_t token = at == i ? s : z[at];
  const double v = std::max(0.0, u - nd);
  uint32_t smooth = 0;
  if (alpha_alias_.empty()) {
    smooth = std::min(static_cast<uint32_t>(v / p_.alpha), p_.topics - 1);
  } else {
    const double x = v * topics_per_alpha_;
    const uint32_t entry = std::min(static_cast<uint32_t>(x), p_.topics - 1);
    const AliasEntry& e = alpha_alias_[entry];
    smooth = static_cast<float>(x - entry) < e.threshold ? e.topic : e.alias;
  }
  return u < nd ? token : smooth;
}

// One token: a chain of mh_steps (word proposal, doc proposal) pairs targeting
// p(k) ~ (n_dk + alpha_k)(n_wk + beta) / (n_k + V beta), n_wk and n_k the model's (the token is not
// counted in them), n_dk without the token. The word proposal is exactly
// q_w(k) ~ (n_wk + beta) / (n_k + V beta), so its acceptance ratio is the document factor alone.
// The doc proposal q_d(k | s) ~ n_dk + [k = s] + alpha_k counts the token at its current topic s;
// its ratio q_d(s | t) / q_d(t | s) then cancels the document factor, leaving the word's. (Counting
// the token where the chain started instead, as this sampler did, made each step's kernel depend
// on the chain's start: a cell of the 3-topic test's posterior was off by 0.026.)
void FoldInSampler::SampleDoc(const DocTokens& doc, const WordTopicTable& table, Rng& rng) {
  const uint32_t nd = doc.size;
  uint32_t* z = doc.z;
  const double beta = p_.beta, vbeta = vbeta_;
  const double doc_mass = nd + p_.AlphaSum();
  const double* alpha = alpha_.data();
  for (uint32_t i = doc.begin; i < doc.end; ++i) {
    const uint32_t w = doc.words[i], s0 = z[i];
    uint32_t s = s0;
    double nds = ndk_[s0] - 1;
    for (uint32_t step = 0; step < p_.mh_steps; ++step) {
      uint32_t t = DrawWordProposal(w, rng, rng.Next());
      if (t != s) {
        const double ndt = ndk_[t] - (t == s0);
        if (rng.Uniform() * (nds + alpha[s]) < ndt + alpha[t]) s = t, nds = ndt;
      }
      t = DocProposal(z, nd, i, s, rng.Uniform() * doc_mass);
      if (t != s) {
        const double num = (table.Get(w, t) + beta) * (static_cast<double>(nk_[s]) + vbeta);
        const double den = (table.Get(w, s) + beta) * (static_cast<double>(nk_[t]) + vbeta);
        if (rng.Uniform() * den < num) s = t, nds = ndk_[t] - (t == s0);
      }
    }
    if (s != s0) {
      z[i] = s;
      --ndk_[s0];
      ++ndk_[s];
    }
  }
}

}  // namespace parasol::apps::lda
