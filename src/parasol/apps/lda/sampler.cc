#include "parasol/apps/lda/sampler.h"

#include <algorithm>
#include <cassert>

namespace parasol::apps::lda {

TokenStore TokenStore::Build(const Corpus& corpus, size_t d0, size_t d1, std::span<const uint32_t> word_sub,
                             uint32_t num_subs, uint32_t num_topics, Rng& rng) {
  TokenStore ts;
  ts.num_subs = num_subs;
  const uint64_t n = corpus.doc_offsets[d1] - corpus.doc_offsets[d0];
  ts.words.reserve(n);
  ts.z.reserve(n);
  ts.doc_offsets.reserve(d1 - d0 + 1);
  ts.sub_offsets.reserve((d1 - d0) * (num_subs + 1));
  ts.position.reserve(n);
  std::vector<uint32_t> order;
  for (size_t d = d0; d < d1; ++d) {
    auto words = corpus.doc(d);
    order.resize(words.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return word_sub[words[a]] < word_sub[words[b]]; });
    size_t i = 0;
    for (uint32_t s = 0; s <= num_subs; ++s) {
      while (i < order.size() && word_sub[words[order[i]]] < s) ++i;
      ts.sub_offsets.push_back(static_cast<uint32_t>(i));
    }
    for (uint32_t o : order) {
      ts.words.push_back(words[o]);
      ts.position.push_back(o);
    }
    for (size_t j = 0; j < order.size(); ++j) ts.z.push_back(rng.Below(num_topics));
    ts.doc_offsets.push_back(ts.words.size());
  }
  return ts;
}

std::vector<uint32_t> TokenStore::CorpusOrderTopics() const {
  std::vector<uint32_t> out(z.size());
  for (size_t d = 0; d < num_docs(); ++d) {
    for (uint64_t i = doc_offsets[d]; i < doc_offsets[d + 1]; ++i) out[doc_offsets[d] + position[i]] = z[i];
  }
  return out;
}

void TokenStore::SetCorpusOrderTopics(std::span<const uint32_t> topics) {
  for (size_t d = 0; d < num_docs(); ++d) {
    for (uint64_t i = doc_offsets[d]; i < doc_offsets[d + 1]; ++i) z[i] = topics[doc_offsets[d] + position[i]];
  }
}

std::vector<std::pair<uint32_t, uint32_t>> TokenStore::TopicCounts(size_t d, std::vector<uint32_t>& scratch) const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint64_t i = doc_offsets[d]; i < doc_offsets[d + 1]; ++i) ++scratch[z[i]];
  for (uint64_t i = doc_offsets[d]; i < doc_offsets[d + 1]; ++i) {
    if (scratch[z[i]] != 0) out.emplace_back(z[i], scratch[z[i]]), scratch[z[i]] = 0;
  }
  std::sort(out.begin(), out.end());
  return out;
}

void TokenStore::CountInto(WordTopicTable& table, std::span<int64_t> totals) const {
  for (size_t i = 0; i < words.size(); ++i) {
    table.Inc(words[i], z[i]);
    ++totals[z[i]];
  }
}

ThreadSampler::ThreadSampler(const LdaParams& params)
    : p_(params),
      vbeta_(params.beta * params.vocab_size),
      ndk_(params.topics, 0),
      nk_(params.topics, 0),
      word_alias_(params.sampler == SamplerKind::kMh ? params.vocab_size : 0) {}

void ThreadSampler::BeginRound(const WordTopicTable& table, std::span<const int64_t> totals,
                               std::span<const uint32_t> words) {
  nk_.assign(totals.begin(), totals.end());
  nk_start_ = nk_;
  if (p_.sampler != SamplerKind::kMh) return;
  const uint32_t k = p_.topics;
  // The smoothing part, shared by all words.
  topics_buf_.resize(k);
  weights_buf_.resize(k);
  for (uint32_t t = 0; t < k; ++t) {
    topics_buf_[t] = t;
    weights_buf_[t] = p_.beta / (static_cast<double>(nk_[t]) + vbeta_);
  }
  smooth_.clear();
  smooth_mass_ = BuildAlias(topics_buf_, weights_buf_, smooth_, scratch_);
  arena_.clear();
  for (uint32_t w : words) {
    WordAlias& a = word_alias_[w];
    a = WordAlias{static_cast<uint32_t>(arena_.size()), 0, 0.0};
    if (!table.resident(w)) continue;
    topics_buf_.clear();
    weights_buf_.clear();
    pairs_buf_.resize(table.max_slots());
    const size_t n = table.CopyNonzero(w, pairs_buf_.data());
    if (n == 0) continue;
    // (In an order that depends on the counts only: see WordTopicTable. A resumed run draws as
    // an uninterrupted one.)
    for (size_t j = 0; j < n; ++j) {
      const auto [t, c] = pairs_buf_[j];
      topics_buf_.push_back(t);
      weights_buf_.push_back(c / (static_cast<double>(nk_[t]) + vbeta_));
    }
    a.size = static_cast<uint32_t>(topics_buf_.size());
    a.mass = BuildAlias(topics_buf_, weights_buf_, arena_, scratch_);
  }
}

std::vector<int64_t> ThreadSampler::TotalsDelta() const {
  std::vector<int64_t> d(nk_.size());
  for (size_t t = 0; t < d.size(); ++t) d[t] = nk_[t] - nk_start_[t];
  return d;
}

void ThreadSampler::Sample(TokenStore& ts, size_t d0, size_t d1, uint32_t sub, WordTopicTable& table, Rng& rng) {
  for (size_t d = d0; d < d1; ++d) {
    const uint32_t* so = ts.sub_offsets.data() + d * (ts.num_subs + 1);
    if (so[sub] == so[sub + 1]) continue;
    const uint64_t base = ts.doc_offsets[d];
    const DocTokens doc{ts.z.data() + base, ts.words.data() + base,
                        static_cast<uint32_t>(ts.doc_offsets[d + 1] - base), so[sub], so[sub + 1]};
    for (uint32_t i = 0; i < doc.size; ++i) ++ndk_[doc.z[i]];  // the document's counts, kept current
    if (p_.sampler == SamplerKind::kMh) {
      SampleDocMh(doc, table, rng);
    } else {
      SampleDocGibbs(doc, table, rng);
    }
    for (uint32_t i = 0; i < doc.size; ++i) ndk_[doc.z[i]] = 0;
    tokens_sampled_ += doc.end - doc.begin;
  }
}

inline uint32_t ThreadSampler::DrawWordProposal(uint32_t w, Rng& rng, uint64_t r) const {
  const WordAlias& a = word_alias_[w];
  // The word's table or the shared one: for rare words nearly a coin flip, so selected, not branched.
  const bool own = rng.Uniform() * (a.mass + smooth_mass_) < a.mass;
  const AliasEntry* table = own ? arena_.data() + a.offset : smooth_.data();
  const uint32_t size = own ? a.size : static_cast<uint32_t>(smooth_.size());
  return DrawAlias(table, size, r);
}

void ThreadSampler::Move(uint32_t w, uint32_t from, uint32_t to, WordTopicTable& table) {
  --ndk_[from];
  ++ndk_[to];
  if (frozen_) return;
  table.Dec(w, from);
  table.Inc(w, to);
  --nk_[from];
  ++nk_[to];
  if (log_changes_) changes_.push_back({w, from, to});
}

// The topic of token floor(u) of the document when u < nd, else uniform topic floor((u - nd) / alpha);
// both are computed and one selected (which one is random: a branch would mispredict).
inline uint32_t ThreadSampler::DocProposal(const uint32_t* z, uint32_t nd, double u, double alpha) const {
  const uint32_t token = z[std::min(static_cast<uint32_t>(u), nd - 1)];
  const double v = std::max(0.0, (u - nd) / alpha);
  const uint32_t uniform = std::min(static_cast<uint32_t>(v), p_.topics - 1);
  return u < nd ? token : uniform;
}

// One token: a chain of mh_steps (word proposal, doc proposal) pairs targeting
// p(k) ~ (n_dk + alpha)(n_wk + beta) / (n_k + V beta), counts without the token (its old topic s0
// is subtracted on the fly, so an unchanged token writes nothing). The doc proposal
// q_d(k) ~ n_dk + alpha counts the token at s0. The word proposal is taken as
// q_w(k) ~ (n_wk + beta) / (n_k + V beta) with current counts, as LightLDA does (its tables are
// rebuilt every round); its word and total factors then cancel against the target's except where
// the token's own count differs, i.e. at s0, so a word proposal reads no word-topic count.
void ThreadSampler::SampleDocMh(const DocTokens& doc, WordTopicTable& table, Rng& rng) {
  const uint32_t nd = doc.size;
  uint32_t* z = doc.z;
  const uint32_t* words = doc.words;
  const double alpha = p_.alpha, beta = p_.beta, vbeta = vbeta_;
  const double doc_mass = nd + p_.topics * alpha;
  const double wx = frozen_ ? 0.0 : 1.0;  // whether the token is counted in the word-side counts
  const uint32_t end = doc.end;
  // Memory latency, not arithmetic, bounds this loop, so it is pipelined: the random numbers of
  // a token's first proposals are drawn two tokens ahead and what they will read is prefetched
  // (rows and alias headers three tokens ahead).
  constexpr uint32_t kAhead = 2;
  struct Draw {
    uint64_t alias;
    double doc;
  } ahead[kAhead];
  auto draw_for = [&](uint32_t j) {
    Draw& dr = ahead[j % kAhead];
    dr = {rng.Next(), rng.Uniform() * doc_mass};
    const uint32_t wj = words[j];
    table.Prefetch(wj, z[j]);
    const WordAlias& a = word_alias_[wj];
    __builtin_prefetch(arena_.data() + a.offset + (((dr.alias >> 32) * a.size) >> 32));
    if (dr.doc < nd) table.Prefetch(wj, z[static_cast<uint32_t>(dr.doc)]);
  };
  const uint32_t begin = doc.begin;
  for (uint32_t j = begin; j < std::min(end, begin + kAhead); ++j) draw_for(j);
  for (uint32_t i = begin; i < end; ++i) {
    const uint32_t w = words[i], s0 = z[i];
    const Draw first = ahead[i % kAhead];
    if (i + kAhead + 1 < end) {
      table.PrefetchRow(words[i + kAhead + 1]);
      __builtin_prefetch(&word_alias_[words[i + kAhead + 1]]);
    }
    if (i + kAhead < end) draw_for(i + kAhead);
    // Without the token: its word's and the totals' counts at s0 (fixed for the chain).
    const double nw0 = table.Get(w, s0) - wx, n0 = static_cast<double>(nk_[s0]) - wx;
    // The chain's state s and its counts (nws < 0: not looked up yet).
    uint32_t s = s0;
    double nds = ndk_[s0] - 1, nws = nw0, ns = n0;
    for (uint32_t step = 0; step < p_.mh_steps; ++step) {
      // Word proposal: only the factors at s0 survive (see above).
      uint32_t t = DrawWordProposal(w, rng, step == 0 ? first.alias : rng.Next());
      if (t != s) {
        const double ndt = ndk_[t] - (t == s0);
        double num = ndt + alpha, den = nds + alpha;
        if (s == s0) {
          num *= (nw0 + wx + beta) * (n0 + vbeta);
          den *= (nw0 + beta) * (n0 + wx + vbeta);
        } else if (t == s0) {
          num *= (nw0 + beta) * (n0 + wx + vbeta);
          den *= (nw0 + wx + beta) * (n0 + vbeta);
        }
        if (rng.Uniform() * den < num) {
          s = t, nds = ndt;
          if (t == s0) {
            nws = nw0, ns = n0;
          } else {
            nws = -1, ns = static_cast<double>(nk_[t]);
          }
        }
      }
      // Doc proposal: the topic of a random token of the document, or a uniform topic.
      const double u = step == 0 ? first.doc : rng.Uniform() * doc_mass;
      t = DocProposal(z, nd, u, alpha);
      if (t != s) {
        const double ex_t = t == s0, ex_s = s == s0, wt = ex_t * wx;
        if (nws < 0) nws = table.Get(w, s);  // s != s0 here: no exclusion
        const double ndt = ndk_[t] - ex_t, nwt = table.Get(w, t) - wt, nt = static_cast<double>(nk_[t]) - wt;
        const double num = (ndt + alpha) * (nwt + beta) * (ns + vbeta) * (nds + ex_s + alpha);
        const double den = (nds + alpha) * (nws + beta) * (nt + vbeta) * (ndt + ex_t + alpha);
        if (rng.Uniform() * den < num) s = t, nds = ndt, nws = nwt, ns = nt;
      }
    }
    if (s != s0) {
      z[i] = s;
      Move(w, s0, s, table);
    }
  }
}

void ThreadSampler::SampleDocGibbs(const DocTokens& doc, WordTopicTable& table, Rng& rng) {
  uint32_t* z = doc.z;
  const uint32_t* words = doc.words;
  const uint32_t k = p_.topics;
  gibbs_p_.resize(k);
  wrow_.assign(k, 0);
  for (uint32_t i = doc.begin; i < doc.end; ++i) {
    const uint32_t w = words[i], s0 = z[i];
    table.ForEachNonzero(w, [&](uint32_t t, int32_t c) { wrow_[t] = c; });
    const int wx = frozen_ ? 0 : 1;
    wrow_[s0] -= wx;
    --ndk_[s0];
    nk_[s0] -= wx;
    double sum = 0;
    for (uint32_t t = 0; t < k; ++t) {
      sum += (ndk_[t] + p_.alpha) * (wrow_[t] + p_.beta) / (static_cast<double>(nk_[t]) + vbeta_);
      gibbs_p_[t] = sum;
    }
    const double u = rng.Uniform() * sum;
    uint32_t s = static_cast<uint32_t>(std::upper_bound(gibbs_p_.begin(), gibbs_p_.end(), u) - gibbs_p_.begin());
    s = std::min(s, k - 1);
    ++ndk_[s0];
    nk_[s0] += wx;
    if (s != s0) {
      z[i] = s;
      Move(w, s0, s, table);
    }
    table.ForEachNonzero(w, [&](uint32_t t, int32_t) { wrow_[t] = 0; });
    wrow_[s0] = 0;
  }
}

}  // namespace parasol::apps::lda
