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
// Positions are 32-bit: a process holds fewer than 2^32 tokens (the trainer checks). Topics are
// 16-bit where the caller asks (every topic below 65,536) and 32-bit otherwise: on corpora larger
// than the caches the passes wait on the topic arrays' random lines, and half the bytes make
// more of them hit (20 M tokens, K = 1,000: 1.12-1.17x the tokens/s of 32-bit topics).
#pragma once

#include <cassert>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "parasol/apps/lda/corpus.h"
#include "parasol/core/huge_page_allocator.h"
#include "parasol/core/rng.h"

namespace parasol::apps::lda {

// How wide the two topic arrays' entries are.
enum class TopicBits : uint8_t { k16 = 16, k32 = 32 };

class TokenLayout {
 public:
  TokenLayout() = default;
  // Documents [d0, d1) of `corpus`; `doc_cut`: groups + 1 boundaries of the document groups, in
  // local document numbers (0 .. d1 - d0); `word_group[w]` < word_groups for every word of the
  // corpus. Every topic is 0 until DrawTopics or SetCorpusOrderTopics sets them (or a caller
  // writes both orders itself). With TopicBits::k16 every topic written must be below 65,536.
  TokenLayout(const Corpus& corpus, size_t d0, size_t d1, std::span<const size_t> doc_cut,
              std::span<const uint32_t> word_group, uint32_t word_groups, TopicBits bits = TopicBits::k32);

  uint32_t groups() const { return groups_; }
  uint32_t word_groups() const { return word_groups_; }
  size_t num_docs() const { return doc_offsets_.size() - 1; }
  size_t num_words() const { return word_offsets_.size() - 1; }  // the corpus's vocabulary
  uint64_t num_tokens() const { return dword_.size(); }
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

  TopicBits topic_bits() const { return bits_; }
  // Each token's topic in document order and in word order, as Z: uint16_t for 16-bit topics,
  // uint32_t for 32-bit ones (a Z of the other width is a programmer's error).
  template <typename Z>
  Z* doc_topics() {
    return Pick<Z>(dz16_.data(), dz_.data());
  }
  template <typename Z>
  const Z* doc_topics() const {
    return Pick<const Z>(dz16_.data(), dz_.data());
  }
  template <typename Z>
  Z* word_topics() {
    return Pick<Z>(wz16_.data(), wz_.data());
  }
  template <typename Z>
  const Z* word_topics() const {
    return Pick<const Z>(wz16_.data(), wz_.data());
  }
  // fn(doc_topics, word_topics) as their stored type: for code that serves both widths.
  template <typename Fn>
  decltype(auto) WithTopics(Fn&& fn) {
    return bits_ == TopicBits::k16 ? fn(dz16_.data(), wz16_.data()) : fn(dz_.data(), wz_.data());
  }
  template <typename Fn>
  decltype(auto) WithTopics(Fn&& fn) const {
    const uint16_t *d16 = dz16_.data(), *w16 = wz16_.data();
    const uint32_t *d32 = dz_.data(), *w32 = wz_.data();
    return bits_ == TopicBits::k16 ? fn(d16, w16) : fn(d32, w32);
  }
  // Document order: each token's word and position in word order.
  const uint32_t* doc_words() const { return dword_.data(); }
  const uint32_t* doc_cross() const { return dcross_.data(); }
  // The word-ordered topics, moved out (their data stays where it is) for a caller that drops the
  // rest of the layout but still reads them; the layout is then to be dropped too.
  template <typename Z>
  HugePageVector<Z> TakeWordTopics() {
    HugePageVector<Z>* wz = nullptr;
    if constexpr (sizeof(Z) == 2) {
      wz = &wz16_;
    } else {
      wz = &wz_;
    }
    assert(wz->data() == word_topics<Z>());
    return std::move(*wz);
  }
  // Word order: each token's document (local number) and position in document order.
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
  template <typename Z, typename N, typename W>
  Z* Pick(N* narrow, W* wide) const {
    using T = std::remove_const_t<Z>;
    static_assert(std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t>);
    assert(bits_ == (sizeof(T) == 2 ? TopicBits::k16 : TopicBits::k32));
    if constexpr (sizeof(T) == 2) {
      return narrow;
    } else {
      return wide;
    }
  }

  uint32_t groups_ = 1, word_groups_ = 1;
  TopicBits bits_ = TopicBits::k32;
  size_t d0_ = 0;
  std::vector<size_t> doc_cut_;
  std::vector<uint32_t> word_group_;
  std::vector<uint32_t> doc_offsets_{0}, doc_groups_;
  std::vector<uint32_t> word_offsets_{0}, word_doc_groups_;
  // The six per-token arrays: the passes read them at random positions (huge_page_allocator.h).
  // The topics are in dz16_ and wz16_ or in dz_ and wz_, as bits_ says; the other two are empty.
  HugePageVector<uint32_t> dz_, dword_, dcross_;
  HugePageVector<uint32_t> wz_, wdoc_, wcross_;
  HugePageVector<uint16_t> dz16_, wz16_;
};

}  // namespace parasol::apps::lda
