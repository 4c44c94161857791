#include "parasol/apps/lda/mh_sampler.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace parasol::apps::lda {

namespace {

uint32_t MulHi(uint32_t a, uint32_t b) { return static_cast<uint32_t>((uint64_t{a} * b) >> 32); }

uint32_t Threshold(uint32_t len, double smoothing_mass) {
  const double share = len / (len + smoothing_mass);
  return static_cast<uint32_t>(std::min(4294967295.0, std::floor(share * 4294967296.0)));
}

// A uniform float in [0, 1) from the top 24 bits.
float Uniform24(uint64_t r) { return static_cast<float>(r >> 40) * 0x1.0p-24f; }

}  // namespace

ProposalTables MakeProposalTables(const TokenLayout& layout, const LdaParams& p) {
  ProposalTables t;
  t.by_word.resize(layout.num_words());
  for (uint32_t w = 0; w < layout.num_words(); ++w) {
    const uint32_t b = layout.word_begin(w), e = layout.word_end(w);
    t.by_word[w] = Proposal{b, e - b, 0, 0};
  }
  t.by_doc.resize(layout.num_docs());
  for (size_t d = 0; d < layout.num_docs(); ++d) {
    const uint32_t b = layout.doc_begin(d), e = layout.doc_end(d);
    t.by_doc[d] = Proposal{b, e - b, 0, 0};
  }
  t.SetSmoothing(p);
  return t;
}

void ProposalTables::SetWord(uint32_t w, uint32_t start, uint32_t len, uint32_t shift) {
  by_word[w] = Proposal{start, len, Threshold(len, topics_beta), shift};
}

void ProposalTables::SetSmoothing(const LdaParams& p) {
  topics_beta = p.topics * p.beta;
  alpha_sum = p.AlphaSum();
  for (Proposal& w : by_word) w.threshold = Threshold(w.len, topics_beta);
  for (Proposal& d : by_doc) d.threshold = Threshold(d.len, alpha_sum);
}

MhSampler::MhSampler(const LdaParams& params)
    : p_(params),
      vbeta_(static_cast<float>(params.beta * params.vocab_size)),
      counts_(params.topics, 0),
      hint_counts_(params.topics * sizeof(uint64_t) >= kHintCountsBytes) {
  if (p_.topic_alpha.empty()) return;
  std::vector<uint32_t> topics(p_.topics);
  for (uint32_t k = 0; k < p_.topics; ++k) topics[k] = k, alpha_.push_back(static_cast<float>(p_.Alpha(k)));
  AliasScratch scratch;
  BuildAlias(topics, p_.topic_alpha, alpha_alias_, scratch);
}

void MhSampler::BeginRound(std::span<const int64_t> totals) {
  start_totals_.assign(totals.begin(), totals.end());
  for (uint32_t k = 0; k < p_.topics; ++k) counts_[k] = static_cast<uint64_t>(totals[k]) * kTotal;
}

std::vector<int64_t> MhSampler::TotalsDelta() const {
  std::vector<int64_t> d(p_.topics);
  for (uint32_t k = 0; k < p_.topics; ++k) d[k] = Total(counts_[k]) - start_totals_[k];
  return d;
}

void MhSampler::DocPass(TokenLayout& layout, const ProposalTables& tables, uint32_t doc_group,
                        uint32_t word_group, Rng& rng, void* block) {
  segments_.clear();
  for (size_t d = layout.group_doc_begin(doc_group); d < layout.group_doc_end(doc_group); ++d) {
    const uint32_t b = layout.doc_group_begin(d, word_group), e = layout.doc_group_end(d, word_group);
    if (b < e) segments_.push_back({b, e, 0, layout.doc_begin(d), layout.doc_end(d)});
  }
  Run<true>(layout, layout.doc_words(), layout.doc_cross(), tables.by_word.data(),
            static_cast<float>(p_.alpha), block, rng);
}

void MhSampler::WordPass(TokenLayout& layout, const ProposalTables& tables, std::span<const uint32_t> words,
                         uint32_t doc_group, Rng& rng, void* block) {
  segments_.clear();
  for (uint32_t w : words) {
    const uint32_t b = layout.word_group_begin(w, doc_group), e = layout.word_group_end(w, doc_group);
    const Proposal& all = tables.by_word[w];
    if (b < e) segments_.push_back({b, e, all.shift, all.start, all.start + all.len});
  }
  Run<false>(layout, layout.word_docs(), layout.word_cross(), tables.by_doc.data(),
             static_cast<float>(p_.beta), block, rng);
}

template <bool kDocPass>
void MhSampler::Run(TokenLayout& layout, const uint32_t* key, const uint32_t* cross,
                    const Proposal* proposals, float smoothing, void* block, Rng& rng) {
  layout.WithTopics([&](auto* dz, auto* wz) {
    using Z = std::remove_pointer_t<decltype(dz)>;
    Z* words = block != nullptr ? static_cast<Z*>(block) : wz;
    Run<kDocPass, Z>({kDocPass ? dz : words, key, cross, kDocPass ? words : dz, proposals, smoothing}, rng);
  });
}

// The proposal's topic: a random token of the unit (its current topic) or the smoothing part's,
// uniform or (kByAlpha) drawn by alpha: the alias entry from hi's top bits and the coin from its
// fraction. Both are computed and one selected: which one is random, so a branch would mispredict.
template <bool kByAlpha, typename Z>
inline uint32_t MhSampler::Draw(const Proposal& p, uint64_t r, const Z* other_z) const {
  const uint32_t hi = static_cast<uint32_t>(r >> 32);
  const uint32_t token = other_z[p.start + MulHi(hi, p.len)];
  uint32_t smooth = MulHi(hi, p_.topics);
  if constexpr (kByAlpha) {
    const AliasEntry& e = alpha_alias_[smooth];
    const float coin = static_cast<float>(hi * p_.topics) * 0x1.0p-32f;
    smooth = coin < e.threshold ? e.topic : e.alias;
  }
  return static_cast<uint32_t>(r) < p.threshold ? token : smooth;
}

// Token j (its topic at own_z[j + shift]), whose first proposal t is drawn: mh_steps MH steps
// (one when kOneStep: the loop and its bound out of the way). `second` is the random number of the
// second step's proposal, drawn early so that the topic it reads could be prefetched.
template <bool kDocPass, bool kOneStep, bool kAsym, typename Z>
inline void MhSampler::Step(const Pass<Z>& pass, uint32_t j, uint32_t shift, uint32_t t, uint64_t second,
                            Rng& rng) {
  constexpr bool kByTopic = kDocPass && kAsym;   // the document counts' smoothing is alpha_k
  constexpr bool kByAlpha = !kDocPass && kAsym;  // document proposals' smoothing part
  const float h = pass.smoothing, vb = vbeta_;
  Z& own = pass.own_z[j + shift];
  uint32_t s = own;
  for (uint32_t step = 0;;) {
    // Counts without the token, which sits at s. (t == s needs no test: whatever the coin says,
    // the token stays where it is.) Branch-free: the coin is unpredictable, and a branch on it
    // cost more than the arithmetic; a rejected move writes its topic to a dummy slot rather
    // than to the other order.
    const uint64_t cs = counts_[s], ct = counts_[t];
    const float ht = kByTopic ? alpha_[t] : h, hs = kByTopic ? alpha_[s] : h;
    const float num = (static_cast<float>(Here(ct)) + ht) * (static_cast<float>(Total(cs) - 1) + vb);
    const float den = (static_cast<float>(Here(cs) - 1) + hs) * (static_cast<float>(Total(ct)) + vb);
    const bool accept = Uniform24(rng.Next()) * den < num;
    // Masks rather than ?: (which the compiler turns back into a branch).
    const uint32_t mask = 0u - static_cast<uint32_t>(accept);
    const uint32_t next = s ^ ((s ^ t) & mask);
    // The token in the other order: its word's position shifted (document pass), or its
    // document's position (word pass).
    // (Index arithmetic in 32 bits: the shift is modulo 2^32.)
    const uint32_t at = pass.cross[j] + (kDocPass ? pass.proposals[pass.key[j]].shift : 0u);
    const auto other = reinterpret_cast<uintptr_t>(pass.other_z + at);
    const auto dummy = reinterpret_cast<uintptr_t>(Dummy<Z>());
    *reinterpret_cast<Z*>(dummy ^ ((dummy ^ other) & (uintptr_t{0} - accept))) = static_cast<Z>(next);
    own = static_cast<Z>(next);
    // Both counts' addresses are known before the coin: only the data waits for it.
    const uint64_t moved = (kHere + kTotal) & (uint64_t{0} - accept);
    counts_[s] -= moved;
    counts_[t] += moved;
    s = next;
    if (kOneStep || ++step == p_.mh_steps) break;
    t = Draw<kByAlpha, Z>(pass.proposals[pass.key[j]], step == 1 ? second : rng.Next(), pass.other_z);
  }
}

// Clears the "here" counts of topics own_z[begin, end): by topic when there are more tokens than
// topics (a loop the compiler vectorises, rather than a dependent read-modify-write per token).
template <typename Z>
void MhSampler::ClearHere(const Z* own_z, uint32_t begin, uint32_t end) {
  if (end - begin > p_.topics) {
    for (uint64_t& c : counts_) c &= ~(kTotal - 1);
    return;
  }
  for (uint32_t i = begin; i < end; ++i) counts_[own_z[i]] &= ~(kTotal - 1);
}

// A segment is a piece of its document (or word) when the other side is cut into groups (word
// blocks, threads): the keys and positions RunSteps' lookahead reads then jump from piece to piece,
// which the hardware's stream prefetcher does not follow, and each jump missed the caches (two
// processes, 4 word blocks: the document pass 34% slower a token than one process's). So the
// pieces' lines are fetched kPiecesAhead tokens before the lookahead reaches them; not where a
// segment follows on from the one before, as whole documents do: the stream prefetcher has those.
void MhSampler::FetchPieces(const uint32_t* key, const uint32_t* cross, uint64_t until, size_t& next,
                            uint64_t& covered) const {
  for (; next < segments_.size() && covered < until; ++next) {
    const Segment& f = segments_[next];
    covered += f.end - f.begin;
    if (next > 0 && f.begin == segments_[next - 1].end) continue;
    for (uint32_t j = f.begin & ~15u; j < f.end; j += 16) {  // a line: 2 MB-aligned arrays (large corpora)
      __builtin_prefetch(key + j);
      __builtin_prefetch(cross + j);
    }
  }
}

template <bool kDocPass, typename Z>
void MhSampler::Run(const Pass<Z>& pass, Rng& rng) {
  const bool one = p_.mh_steps == 1, asym = !alpha_.empty();
  if (one && !asym) RunSteps<kDocPass, true, false, Z>(pass, rng);
  if (!one && !asym) RunSteps<kDocPass, false, false, Z>(pass, rng);
  if (one && asym) RunSteps<kDocPass, true, true, Z>(pass, rng);
  if (!one && asym) RunSteps<kDocPass, false, true, Z>(pass, rng);
}

template <bool kDocPass, bool kOneStep, bool kAsym, typename Z>
void MhSampler::RunSteps(const Pass<Z>& pass, Rng& rng) {
  // Memory latency bounds the loop: the first two proposals of a token are drawn kAhead tokens
  // early (across segments) and the topics they will read prefetched; the proposal entry the draws
  // read is prefetched kAhead tokens before that. (When only the first was, the second step's read
  // missed the caches on large corpora: 20 M tokens at K = 1,000 sampled 3.1 M tokens/s with two
  // steps, 7 M now.) The slot a move would write is not: most moves are rejected, and on corpora
  // larger than the cache that prefetch cost a memory read per token (20M tokens, K=100: 17 -> 20 M
  // tokens/s without it; 16 ahead rather than 8: a little more). 32 ahead rather than 16: with
  // 16-bit topics a one-step token-pass takes about 15 ns on 20 M tokens, so 16 tokens were less than
  // the memory's latency under load (K = 1,000: 1.06-1.09x an iteration; two steps and AP: no change).
  constexpr uint32_t kAhead = 32;
  constexpr bool kByAlpha = !kDocPass && kAsym;
  struct Ahead {
    uint64_t r, second;
    uint32_t key;
  } ahead[kAhead];
  struct Cursor {
    size_t seg = 0;
    uint32_t j = 0;
  };
  // Lookahead cursors: the token drawn next, and the one whose proposal entry is fetched next.
  Cursor draw_at{0, segments_.empty() ? 0 : segments_[0].begin}, fetch_at = draw_at;
  auto advance = [&](Cursor& c) {
    if (++c.j == segments_[c.seg].end && ++c.seg < segments_.size()) c.j = segments_[c.seg].begin;
  };
  auto fetch_ahead = [&] {
    if (fetch_at.seg >= segments_.size()) return;
    __builtin_prefetch(&pass.proposals[pass.key[fetch_at.j]]);
    advance(fetch_at);
  };
  auto draw_ahead = [&](Ahead& a) {
    const uint32_t key = pass.key[draw_at.j];
    const Proposal& p = pass.proposals[key];
    a.r = rng.Next(), a.key = key;
    __builtin_prefetch(pass.other_z + p.start + MulHi(static_cast<uint32_t>(a.r >> 32), p.len));
    a.second = 0;
    if constexpr (!kOneStep) {
      a.second = rng.Next();
      __builtin_prefetch(pass.other_z + p.start + MulHi(static_cast<uint32_t>(a.second >> 32), p.len));
    }
    advance(draw_at);
    fetch_ahead();
  };
  uint64_t total = 0;
  for (const Segment& s : segments_) total += s.end - s.begin;
  uint64_t drawn = 0;
  for (uint32_t n = 0; n < kAhead; ++n) fetch_ahead();
  for (; drawn < std::min<uint64_t>(total, kAhead); ++drawn) draw_ahead(ahead[drawn]);
  uint32_t slot = 0;
  uint64_t n = 0;  // tokens begun
  // Segments whose keys and positions are fetched (FetchPieces), and their tokens.
  size_t fetched_seg = 0;
  uint64_t fetched_tokens = 0;
  for (const Segment& seg : segments_) {
    FetchPieces(pass.key, pass.cross, n + kPiecesAhead, fetched_seg, fetched_tokens);
    for (uint32_t i = seg.here_begin; i < seg.here_end; ++i) counts_[pass.own_z[i]] += kHere;
    for (uint32_t j = seg.begin; j < seg.end; ++j) {
      const Ahead a = ahead[slot];
      if (drawn < total) draw_ahead(ahead[slot]), ++drawn;
      slot = (slot + 1) % kAhead;
      // Half-way ahead, the proposals' topics have arrived: fetch those topics' counts, which at
      // large K are not in the caches (K = 1,000,000: the load of counts_[t] held most of a pass).
      // A hint only: the step reads the topic again when it comes. Below half a MB of counts
      // (K < 65,536) they stay in the L2, and the hint cost 13-16% (AP, K = 100 and 1,000).
      if (++n + kAhead / 2 <= total && hint_counts_) {
        const Ahead& half = ahead[(slot + kAhead / 2 - 1) % kAhead];
        const Proposal& p = pass.proposals[half.key];
        __builtin_prefetch(&counts_[Draw<kByAlpha, Z>(p, half.r, pass.other_z)]);
        if constexpr (!kOneStep)
          __builtin_prefetch(&counts_[Draw<kByAlpha, Z>(p, half.second, pass.other_z)]);
      }
      const uint32_t first = Draw<kByAlpha, Z>(pass.proposals[a.key], a.r, pass.other_z);
      Step<kDocPass, kOneStep, kAsym, Z>(pass, j, seg.shift, first, a.second, rng);
    }
    ClearHere(pass.own_z, seg.here_begin, seg.here_end);
    tokens_sampled_ += seg.end - seg.begin;
  }
}

}  // namespace parasol::apps::lda
