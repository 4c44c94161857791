// The training sampler: LightLDA's Metropolis-Hastings chain (a word proposal and a document
// proposal per token and step), run as two passes over a TokenLayout in the manner of WarpLDA,
// but with every count current, so that each step is an exact MH step for the collapsed
// posterior p(z_i | z_-i, w) ~ (n_dk + alpha)(n_wk + beta) / (n_k + V beta) (counts without the
// token).
//
// Document pass: documents one at a time, n_dk counted into a scratch array of K; each token gets
// `mh_steps` word proposals q_w(k) ~ n_wk + beta (the token itself counted): a random token of the
// same word (read from the word-ordered topics) or, with weight K beta, a uniform topic. The
// acceptance ratio (n_dt + alpha_t)(n_s + V beta) / ((n_ds + alpha_s)(n_t + V beta)) needs no word
// count. Word pass: words one at a time, n_wk counted from the word's tokens into the scratch;
// document proposals q_d(k) ~ n_dk + alpha_k, a random token of the same document or a topic
// drawn by alpha (uniform when alpha is symmetric, else from an alias table); acceptance (n_wt + beta)(n_s +
// V beta) / ((n_ws + beta)(n_t + V beta)). A move writes both orders and the counts at once. Nothing in
// either pass depends on K but the scratch arrays: no alias tables, no word-topic table; the only random
// accesses are a proposal's topic and a move's write.
//
// Several processes: the word-ordered topics a pass reads are a word block's (block_ring.h),
// which holds every process's tokens of its words; this process's token j of word w sits at
// j + shift(w) there. Proposals and n_wk then cover all of a word's tokens; n_k holds the other
// processes' changes up to two steps old (totals_exchange.h). Several threads: each has its own
// copy of n_k during a round (the trainer merges them).
//
// Threading: one MhSampler per thread; a pass touches only its tile's tokens (token_layout.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/lda/alias_table.h"
#include "parasol/apps/lda/lda_params.h"
#include "parasol/apps/lda/token_layout.h"
#include "parasol/core/huge_page_allocator.h"
#include "parasol/core/rng.h"

namespace parasol::apps::lda {

// Where a proposal from a word (or a document) draws: one of the topics [start, start + len) of
// the word (document) ordered topics with probability threshold / 2^32 = len / (len + K x
// smoothing), else a uniform topic. Words: this process's token j of the word is at j + shift.
struct Proposal {
  uint32_t start = 0, len = 0, threshold = 0, shift = 0;
};

struct ProposalTables {
  std::vector<Proposal> by_word;  // word proposals, smoothing beta
  std::vector<Proposal> by_doc;   // document proposals, smoothing alpha
  double topics_beta = 0;         // K beta
  double alpha_sum = 0;           // sum_k alpha_k
  // Word w's tokens lie at [start, start + len) of the word-ordered topics (all processes').
  void SetWord(uint32_t w, uint32_t start, uint32_t len, uint32_t shift);
  // New hyperparameters (optimised): every proposal's threshold again.
  void SetSmoothing(const LdaParams& params);
};
// One process: the layout's own word-ordered topics.
ProposalTables MakeProposalTables(const TokenLayout& layout, const LdaParams& params);

class MhSampler {
 public:
  explicit MhSampler(const LdaParams& params);

  // Starts a round with `totals` as this thread's topic totals.
  void BeginRound(std::span<const int64_t> totals);
  // Topic totals now minus those given to BeginRound.
  std::vector<int64_t> TotalsDelta() const;

  // `block`: the word-ordered topics the passes read and write, positioned as `tables.by_word`
  // says: the active word block's with several processes (of the layout's topic type), or null for
  // the layout's own (one process).
  // The documents of `doc_group`, their tokens in `word_group`: mh_steps word proposals each.
  void DocPass(TokenLayout& layout, const ProposalTables& tables, uint32_t doc_group, uint32_t word_group,
               Rng& rng, void* block);
  // `words`, their tokens in `doc_group`: mh_steps document proposals each.
  void WordPass(TokenLayout& layout, const ProposalTables& tables, std::span<const uint32_t> words,
                uint32_t doc_group, Rng& rng, void* block);

  uint64_t tokens_sampled() const { return tokens_sampled_; }

 private:
  // n of the current document or word ("here", low 32 bits) and the topic total (high 32 bits)
  // in one word: a step reads both at the same two topics, and a move updates both at once.
  // Neither part goes below zero while every move takes a counted token, so no borrow crosses.
  static constexpr uint64_t kHere = 1, kTotal = uint64_t{1} << 32;
  static int32_t Here(uint64_t c) { return static_cast<int32_t>(static_cast<uint32_t>(c)); }
  static int32_t Total(uint64_t c) { return static_cast<int32_t>(c >> 32); }
  // Tokens [begin, end) of a document or word, whose own topics are at own_z[j + shift] and
  // whose "here" counts are over own_z[here_begin, here_end).
  struct Segment {
    uint32_t begin, end, shift, here_begin, here_end;
  };
  // One pass: the order it streams through and the one its proposals read; Z: the topics' type.
  template <typename Z>
  struct Pass {
    Z* own_z;
    const uint32_t* key;    // per token: the other side's unit (its word, or its document)
    const uint32_t* cross;  // per token: its position in the other order (before any shift)
    Z* other_z;
    const Proposal* proposals;
    float smoothing;  // of the "here" counts: alpha (documents) or beta (words)
  };
  // kAsym: alpha differs by topic (the document pass's smoothing is per topic, the word pass's
  // document proposals draw their smoothing part from `alpha_alias_`).
  // A pass over the layout's topics (as their stored type), with a block's for the word order if
  // one is given.
  template <bool kDocPass>
  void Run(TokenLayout& layout, const uint32_t* key, const uint32_t* cross, const Proposal* proposals,
           float smoothing, void* block, Rng& rng);
  template <bool kDocPass, typename Z>
  void Run(const Pass<Z>& pass, Rng& rng);
  template <bool kDocPass, bool kOneStep, bool kAsym, typename Z>
  void RunSteps(const Pass<Z>& pass, Rng& rng);
  template <bool kDocPass, bool kOneStep, bool kAsym, typename Z>
  void Step(const Pass<Z>& pass, uint32_t j, uint32_t shift, uint32_t t, uint64_t second, Rng& rng);
  template <typename Z>
  void ClearHere(const Z* own_z, uint32_t begin, uint32_t end);
  // Prefetches the keys and positions of segments_[next...] that do not follow on from the
  // segment before, until `covered` (their tokens, counted from the first segment) reaches `until`.
  void FetchPieces(const uint32_t* key, const uint32_t* cross, uint64_t until, size_t& next,
                   uint64_t& covered) const;
  static constexpr uint64_t kPiecesAhead = 128;  // tokens
  template <bool kByAlpha, typename Z>
  uint32_t Draw(const Proposal& p, uint64_t r, const Z* other_z) const;
  // Where a rejected move's write goes.
  template <typename Z>
  Z* Dummy() {
    if constexpr (sizeof(Z) == 2) {
      return &dummy16_;
    } else {
      return &dummy32_;
    }
  }

  LdaParams p_;
  float vbeta_;
  std::vector<float> alpha_;  // per topic, when asymmetric
  std::vector<AliasEntry> alpha_alias_;
  HugePageVector<uint64_t> counts_;  // K entries, read at random: on huge pages when K is large
  // From this size of counts_ on, RunSteps prefetches the proposals' counts (it says why).
  static constexpr size_t kHintCountsBytes = size_t{512} << 10;
  bool hint_counts_;
  std::vector<int64_t> start_totals_;
  std::vector<Segment> segments_;
  uint16_t dummy16_ = 0;
  uint32_t dummy32_ = 0;
  uint64_t tokens_sampled_ = 0;
};

}  // namespace parasol::apps::lda
