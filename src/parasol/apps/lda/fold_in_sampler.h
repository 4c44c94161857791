// Folding in: LightLDA's Metropolis-Hastings sampler over new documents with a trained model's
// word-topic counts held fixed (only the documents' own counts change). Word proposals come from
// per-word alias tables of the fixed model (built once: an exact independence proposal), document
// proposals copy the topic of a random token of the same document or draw a topic by alpha.
//
// Threading: one FoldInSampler per thread, over its own documents; the model is only read.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "parasol/apps/lda/alias_table.h"
#include "parasol/apps/lda/corpus.h"
#include "parasol/apps/lda/lda_params.h"
#include "parasol/apps/lda/word_topic.h"
#include "parasol/core/rng.h"

namespace parasol::apps::lda {

// New documents' tokens in corpus order, with the current topic of each.
struct TokenStore {
  std::vector<uint64_t> doc_offsets{0};
  std::vector<uint32_t> words;
  std::vector<uint32_t> z;

  size_t num_docs() const { return doc_offsets.size() - 1; }
  // Every document of `corpus`; topics drawn uniformly with `rng`.
  static TokenStore Build(const Corpus& corpus, uint32_t num_topics, Rng& rng);
  // Doc d's (topic, tokens) pairs, nonzero only, by topic. `scratch`: K zeros, kept so.
  std::vector<std::pair<uint32_t, uint32_t>> TopicCounts(size_t d, std::vector<uint32_t>& scratch) const;
};

class FoldInSampler {
 public:
  // Builds the alias tables of `words` from the model `table` and `totals`.
  FoldInSampler(const LdaParams& params, const WordTopicTable& table, std::span<const int64_t> totals,
                std::span<const uint32_t> words);
  // One sweep over docs [d0, d1) of `ts`.
  void Sample(TokenStore& ts, size_t d0, size_t d1, const WordTopicTable& table, Rng& rng);

 private:
  // One document: all its tokens (z, words, size) and the range [begin, end) of them to sample.
  // ndk_ holds its topic counts on entry and is kept current.
  struct DocTokens {
    uint32_t* z;
    const uint32_t* words;
    uint32_t size, begin, end;
  };
  void SampleDoc(const DocTokens& doc, const WordTopicTable& table, Rng& rng);
  uint32_t DocProposal(const uint32_t* z, uint32_t nd, uint32_t i, uint32_t s, double u) const;
  uint32_t DrawWordProposal(uint32_t w, Rng& rng, uint64_t alias_random) const;

  LdaParams p_;
  double vbeta_;
  std::vector<int32_t> ndk_;             // the current document's topic counts
  std::vector<int64_t> nk_;              // the model's topic totals
  std::vector<double> alpha_;            // alpha_k
  std::vector<AliasEntry> alpha_alias_;  // over alpha_k (asymmetric alpha), as the trainer's
  double topics_per_alpha_ = 0;          // K / sum alpha
  // Word proposals: alias tables over each word's nonzero topics (weight n_wk / (n_k + V beta))
  // plus one shared table over all topics (weight beta / (n_k + V beta)).
  struct WordAlias {
    uint32_t offset = 0, size = 0;
    double mass = 0;
  };
  std::vector<WordAlias> word_alias_;
  std::vector<AliasEntry> arena_;
  std::vector<AliasEntry> smooth_;
  double smooth_mass_ = 0;
};

}  // namespace parasol::apps::lda
