// The token-level samplers: LightLDA's Metropolis-Hastings sampler (O(1) per token: alternating
// word proposals from per-word alias tables and doc proposals that copy the topic of a random
// token of the same document) and plain collapsed Gibbs (O(K) per token) as the reference.
//
// Threading: one ThreadSampler per thread. In a round, each thread samples its own documents'
// tokens of its own words (a sub-block of the vocabulary), so word rows and document counts are
// never shared; topic totals are this thread's copy, merged by the trainer between rounds.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "parasol/apps/lda/alias_table.h"
#include "parasol/apps/lda/corpus.h"
#include "parasol/apps/lda/rng.h"
#include "parasol/apps/lda/word_topic.h"

namespace parasol::apps::lda {

enum class SamplerKind { kMh, kGibbs };

struct LdaParams {
  uint32_t topics = 100;
  double alpha = 0.5;  // per topic
  double beta = 0.01;  // per word
  uint32_t vocab_size = 0;
  uint32_t mh_steps = 2;  // word + doc proposal pairs per token
  SamplerKind sampler = SamplerKind::kMh;
};

// One process's tokens: its documents, each document's tokens grouped by the vocabulary
// sub-block of their word, with the current topic of each.
struct TokenStore {
  uint32_t num_subs = 1;
  std::vector<uint64_t> doc_offsets{0};
  std::vector<uint32_t> words;
  std::vector<uint32_t> z;
  std::vector<uint32_t> position;  // each token's index within its document in the corpus
  // Doc d's tokens of sub-block s: [doc_offsets[d] + sub_offsets[d * (num_subs + 1) + s], ... s + 1).
  std::vector<uint32_t> sub_offsets;

  size_t num_docs() const { return doc_offsets.size() - 1; }
  uint64_t num_tokens() const { return words.size(); }
  // Documents [d0, d1) of `corpus`, words sorted by `word_sub` (sub-block of each word); topics
  // drawn uniformly with `rng`.
  static TokenStore Build(const Corpus& corpus, size_t d0, size_t d1, std::span<const uint32_t> word_sub,
                          uint32_t num_subs, uint32_t num_topics, Rng& rng);
  // Topics in corpus order (for checkpoints), and setting them from that order.
  std::vector<uint32_t> CorpusOrderTopics() const;
  void SetCorpusOrderTopics(std::span<const uint32_t> topics);
  // Doc d's (topic, tokens) pairs, nonzero only, by topic. `scratch`: K zeros, kept so.
  std::vector<std::pair<uint32_t, uint32_t>> TopicCounts(size_t d, std::vector<uint32_t>& scratch) const;
  // Adds every token's topic to `table` (rows must be resident) and `totals`.
  void CountInto(WordTopicTable& table, std::span<int64_t> totals) const;
};

struct TopicChange {
  uint32_t word, from, to;
};

class ThreadSampler {
 public:
  explicit ThreadSampler(const LdaParams& params);

  // Starts a round: takes `totals` as this thread's topic totals and, for the MH sampler, builds
  // the alias tables of `words` (the round's sub-block) from `table`.
  void BeginRound(const WordTopicTable& table, std::span<const int64_t> totals, std::span<const uint32_t> words);
  // Samples docs [d0, d1) of `ts`, the tokens in sub-block `sub`.
  void Sample(TokenStore& ts, size_t d0, size_t d1, uint32_t sub, WordTopicTable& table, Rng& rng);

  // Topic totals now minus those given to BeginRound.
  std::vector<int64_t> TotalsDelta() const;
  // With logging on, every topic change since the last clear (for the parameter server).
  void set_log_changes(bool on) { log_changes_ = on; }
  std::vector<TopicChange>& changes() { return changes_; }
  // Folding in documents for a trained model: word-topic counts and totals stay as they are
  // (tokens are not counted in them), only document counts and topics change.
  void set_frozen_model(bool on) { frozen_ = on; }
  uint64_t tokens_sampled() const { return tokens_sampled_; }

 private:
  // One document: all its tokens (z, words, size) and the range [begin, end) of them to sample.
  // ndk_ holds its topic counts on entry and is kept current.
  struct DocTokens {
    uint32_t* z;
    const uint32_t* words;
    uint32_t size, begin, end;
  };
  void SampleDocMh(const DocTokens& doc, WordTopicTable& table, Rng& rng);
  void SampleDocGibbs(const DocTokens& doc, WordTopicTable& table, Rng& rng);
  uint32_t DocProposal(const uint32_t* z, uint32_t nd, double u, double alpha) const;
  uint32_t DrawWordProposal(uint32_t w, Rng& rng, uint64_t alias_random) const;
  void Move(uint32_t w, uint32_t from, uint32_t to, WordTopicTable& table);

  LdaParams p_;
  double vbeta_;
  std::vector<int32_t> ndk_;    // the current document's topic counts
  std::vector<int64_t> nk_;     // topic totals, this thread's copy
  std::vector<int64_t> nk_start_;
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
  AliasScratch scratch_;
  std::vector<std::pair<uint32_t, int32_t>> pairs_buf_;
  std::vector<uint32_t> topics_buf_;
  std::vector<double> weights_buf_;
  std::vector<double> gibbs_p_;
  std::vector<int32_t> wrow_;  // Gibbs: the word's row made dense
  bool log_changes_ = false;
  bool frozen_ = false;
  std::vector<TopicChange> changes_;
  uint64_t tokens_sampled_ = 0;
};

}  // namespace parasol::apps::lda
