// One process's tokens stored twice, in document order and in word order, each copy holding every
// token's topic and the token's position in the other copy. The training sampler streams through
// one copy per pass (see mh_sampler.h): the pass over documents reads its word proposals from the
// word-ordered topics, the pass over words its document proposals from the document-ordered
// ones, and every accepted move writes both copies, so both always hold the current state.
//
// Tiles for threads: the process's documents are cut into `groups` contiguous document groups
// (one per thread) and the vocabulary into word groups (one per thread and word block). Within a
// document, tokens are stored grouped by word group; within a word, grouped by document group.
// The tile (document group g, word group h) is then one range per document and one range per
// word, and threads working on tiles that share neither a document group nor a word group touch
// disjoint tokens.
//
// Positions are 32-bit: a process holds fewer than 2^32 tokens (the trainer checks).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/apps/lda/corpus.h"
#include "parasol/core/huge_page_allocator.h"
#include "parasol/core/rng.h"

namespace parasol::apps::lda {

class TokenLayout {
 public:
  TokenLayout() = default;
  // Documents [d0, d1) of `corpus`; `doc_cut`: groups + 1 boundaries of the document groups, in
  // local document numbers (0 .. d1 - d0); `word_group[w]` < word_groups for every word of the
  // corpus. Every topic is 0 until DrawTopics or SetCorpusOrderTopics sets them (or a caller
  // writes both orders itself).
  TokenLayout(const Corpus& corpus, size_t d0, size_t d1, std::span<const size_t> doc_cut,
              std::span<const uint32_t> word_group, uint32_t word_groups);

  uint32_t groups() const { return groups_; }
  uint32_t word_groups() const { return word_groups_; }
  size_t num_docs() const { return doc_offsets_.size() - 1; }
  size_t num_words() const { return word_offsets_.size() - 1; }  // the corpus's vocabulary
  uint64_t num_tokens() const { return dz_.size(); }
  size_t group_doc_begin(uint32_t g) const { return doc_cut_[g]; }
  size_t group_doc_end(uint32_t g) const { return doc_cut_[g + 1]; }

  // Document d's tokens, and those of them in word group h.
  uint32_t doc_begin(size_t d) const { return doc_offsets_[d]; }
  uint32_t doc_end(size_t d) const { return doc_offsets_[d + 1]; }
  uint32_t doc_group_begin(size_t d, uint32_t h) const { return doc_groups_[d * (word_groups_ + 1) + h]; }
  uint32_t doc_group_end(size_t d, uint32_t h) const { return doc_groups_[d * (word_groups_ + 1) + h + 1]; }
  // Word w's tokens, and those of them in document group g.
  uint32_t word_begin(uint32_t w) const { return word_offsets_[w]; }
  uint32_t word_end(uint32_t w) const { return word_offsets_[w + 1]; }
  uint32_t word_group_begin(uint32_t w, uint32_t g) const { return word_doc_groups_[w * (groups_ + 1) + g]; }
  uint32_t word_group_end(uint32_t w, uint32_t g) const {
    return word_doc_groups_[w * (groups_ + 1) + g + 1];
  }

  // Document order: each token's topic, word and position in word order.
  uint32_t* doc_topics() { return dz_.data(); }
  const uint32_t* doc_topics() const { return dz_.data(); }
  const uint32_t* doc_words() const { return dword_.data(); }
  const uint32_t* doc_cross() const { return dcross_.data(); }
  // Word order: each token's topic, document (local number) and position in document order.
  uint32_t* word_topics() { return wz_.data(); }
  const uint32_t* word_topics() const { return wz_.data(); }
  // The word-ordered topics, moved out (their data stays where it is) for a caller that drops the
  // rest of the layout but still reads them; the layout is then to be dropped too.
  HugePageVector<uint32_t> TakeWordTopics() { return std::move(wz_); }
  const uint32_t* word_docs() const { return wdoc_.data(); }
  const uint32_t* word_cross() const { return wcross_.data(); }

  // Every token's topic drawn uniformly from [0, num_topics) with `rng`, in corpus order.
  void DrawTopics(const Corpus& corpus, uint32_t num_topics, Rng& rng);
  // Topics of the documents' tokens in corpus order (checkpoints), and setting them from that
  // order. `corpus`: the one the layout was built from.
  std::vector<uint32_t> CorpusOrderTopics(const Corpus& corpus) const;
  void SetCorpusOrderTopics(const Corpus& corpus, std::span<const uint32_t> topics);
  // Whether both copies hold the same topic for every token (tests).
  bool Consistent() const;
  size_t bytes() const;

 private:
  // Calls fn(corpus token index, layout position) for the documents' tokens.
  template <typename Fn>
  void ForEachCorpusToken(const Corpus& corpus, Fn&& fn) const;

  uint32_t groups_ = 1, word_groups_ = 1;
  size_t d0_ = 0;
  std::vector<size_t> doc_cut_;
  std::vector<uint32_t> word_group_;
  std::vector<uint32_t> doc_offsets_{0}, doc_groups_;
  std::vector<uint32_t> word_offsets_{0}, word_doc_groups_;
  // The six per-token arrays: the passes read them at random positions (huge_page_allocator.h).
  HugePageVector<uint32_t> dz_, dword_, dcross_;
  HugePageVector<uint32_t> wz_, wdoc_, wcross_;
};

}  // namespace parasol::apps::lda
