#include "parasol/apps/lda/token_layout.h"

#include <algorithm>
#include <cassert>
#include <type_traits>

namespace parasol::apps::lda {

TokenLayout::TokenLayout(const Corpus& corpus, size_t d0, size_t d1, std::span<const size_t> doc_cut,
                         std::span<const uint32_t> word_group, uint32_t word_groups, TopicBits bits)
    : groups_(static_cast<uint32_t>(doc_cut.size() - 1)),
      word_groups_(word_groups),
      bits_(bits),
      d0_(d0),
      doc_cut_(doc_cut.begin(), doc_cut.end()),
      word_group_(word_group.begin(), word_group.end()) {
  const uint32_t g1 = groups_ + 1;
  const size_t docs = d1 - d0, vocab = corpus.vocab.size();
  const uint64_t n = corpus.doc_offsets[d1] - corpus.doc_offsets[d0];
  // Document order: each document's tokens by word group (stable).
  doc_offsets_.reserve(docs + 1);
  const uint32_t h1 = word_groups_ + 1;
  doc_groups_.reserve(docs * h1);
  dword_.resize(n);
  std::vector<uint32_t> fill(h1);
  for (size_t d = 0; d < docs; ++d) {
    auto words = corpus.doc(d0 + d);
    const uint32_t base = doc_offsets_.back();
    std::fill(fill.begin(), fill.end(), 0);
    for (uint32_t w : words) ++fill[word_group_[w] + 1];
    fill[0] = base;
    for (uint32_t h = 1; h < h1; ++h) fill[h] += fill[h - 1];
    doc_groups_.insert(doc_groups_.end(), fill.begin(), fill.end());
    for (uint32_t w : words) dword_[fill[word_group_[w]]++] = w;
    doc_offsets_.push_back(base + static_cast<uint32_t>(words.size()));
  }
  // Word order: each word's tokens by document group, documents in order within a group.
  std::vector<uint32_t> per(vocab * g1, 0);  // tokens of (word, document group), then fill cursors
  for (uint32_t g = 0; g < groups_; ++g) {
    for (uint32_t i = doc_offsets_[doc_cut_[g]]; i < doc_offsets_[doc_cut_[g + 1]]; ++i)
      ++per[dword_[i] * g1 + g];
  }
  word_offsets_.assign(vocab + 1, 0);
  word_doc_groups_.assign(vocab * g1, 0);
  uint32_t at = 0;
  for (size_t w = 0; w < vocab; ++w) {
    word_offsets_[w] = at;
    for (uint32_t g = 0; g < groups_; ++g) {
      word_doc_groups_[w * g1 + g] = at;
      const uint32_t count = per[w * g1 + g];
      per[w * g1 + g] = at;
      at += count;
    }
    word_doc_groups_[w * g1 + groups_] = at;
  }
  word_offsets_[vocab] = at;
  wdoc_.resize(n);
  wcross_.resize(n);
  dcross_.resize(n);
  for (uint32_t g = 0; g < groups_; ++g) {
    for (size_t d = doc_cut_[g]; d < doc_cut_[g + 1]; ++d) {
      for (uint32_t i = doc_offsets_[d]; i < doc_offsets_[d + 1]; ++i) {
        const uint32_t j = per[dword_[i] * g1 + g]++;
        wdoc_[j] = static_cast<uint32_t>(d);
        wcross_[j] = i;
        dcross_[i] = j;
      }
    }
  }
  if (bits_ == TopicBits::k16) {
    dz16_.resize(n);
    wz16_.resize(n);
  } else {
    dz_.resize(n);
    wz_.resize(n);
  }
}

void TokenLayout::DrawTopics(const Corpus& corpus, uint32_t num_topics, Rng& rng) {
  WithTopics([&](auto* dz, auto* wz) {
    using Z = std::remove_pointer_t<decltype(dz)>;
    ForEachCorpusToken(corpus, [&](uint64_t, uint32_t i) {
      dz[i] = static_cast<Z>(rng.Below(num_topics));
      wz[dcross_[i]] = dz[i];
    });
  });
}

template <typename Fn>
void TokenLayout::ForEachCorpusToken(const Corpus& corpus, Fn&& fn) const {
  std::vector<uint32_t> next(word_groups_);
  for (size_t d = 0; d < num_docs(); ++d) {
    for (uint32_t h = 0; h < word_groups_; ++h) next[h] = doc_group_begin(d, h);
    const uint64_t base = corpus.doc_offsets[d0_ + d];
    auto words = corpus.doc(d0_ + d);
    for (size_t t = 0; t < words.size(); ++t) fn(base + t, next[word_group_[words[t]]]++);
  }
}

std::vector<uint32_t> TokenLayout::CorpusOrderTopics(const Corpus& corpus) const {
  std::vector<uint32_t> out(num_tokens());
  const uint64_t base = corpus.doc_offsets[d0_];
  WithTopics([&](const auto* dz, const auto*) {
    ForEachCorpusToken(corpus, [&](uint64_t t, uint32_t i) { out[t - base] = dz[i]; });
  });
  return out;
}

void TokenLayout::SetCorpusOrderTopics(const Corpus& corpus, std::span<const uint32_t> topics) {
  const uint64_t base = corpus.doc_offsets[d0_];
  WithTopics([&](auto* dz, auto* wz) {
    using Z = std::remove_pointer_t<decltype(dz)>;
    ForEachCorpusToken(corpus, [&](uint64_t t, uint32_t i) {
      assert(sizeof(Z) == 4 || topics[t - base] <= 0xffff);
      dz[i] = static_cast<Z>(topics[t - base]);
      wz[dcross_[i]] = dz[i];
    });
  });
}

bool TokenLayout::Consistent() const {
  return WithTopics([&](const auto* dz, const auto* wz) {
    for (size_t i = 0; i < num_tokens(); ++i) {
      if (wz[dcross_[i]] != dz[i] || wcross_[dcross_[i]] != i) return false;
    }
    return true;
  });
}

size_t TokenLayout::bytes() const {
  const size_t topic_bytes = bits_ == TopicBits::k16 ? sizeof(uint16_t) : sizeof(uint32_t);
  return 2 * topic_bytes * num_tokens() +
         sizeof(uint32_t) * (4 * num_tokens() + doc_offsets_.size() + doc_groups_.size() +
                             word_offsets_.size() + word_doc_groups_.size() + word_group_.size());
}

}  // namespace parasol::apps::lda
