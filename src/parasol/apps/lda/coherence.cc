#include "parasol/apps/lda/coherence.h"

#include <bit>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "parasol/core/error.h"

namespace parasol::apps::lda {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// The documents holding one word: a sorted list, or a bitset where that is smaller (a word in more
// than one document in 32), so that the pairs of frequent words, which many topics share, cost a
// word-wise AND where merging their lists cost a step per document.
struct DocSet {
  std::vector<uint32_t> list;
  std::vector<uint64_t> bits;
  uint64_t size = 0;

  bool Has(uint32_t d) const { return (bits[d / 64] >> (d % 64)) & 1; }
};

uint64_t Merged(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  uint64_t n = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++n;
      ++i;
      ++j;
    }
  }
  return n;
}

// Documents holding both words.
uint64_t Together(const DocSet& a, const DocSet& b) {
  uint64_t n = 0;
  if (!a.bits.empty() && !b.bits.empty()) {
    for (size_t i = 0; i < a.bits.size(); ++i)
      n += static_cast<uint64_t>(std::popcount(a.bits[i] & b.bits[i]));
    return n;
  }
  if (!a.bits.empty() || !b.bits.empty()) {
    const DocSet& dense = a.bits.empty() ? b : a;
    const DocSet& sparse = a.bits.empty() ? a : b;
    for (uint32_t d : sparse.list) n += dense.Has(d) ? 1 : 0;
    return n;
  }
  return Merged(a.list, b.list);
}

double Npmi(uint64_t both, uint64_t a, uint64_t b, uint64_t docs) {
  if (both == 0) return -1;
  if (both == docs) return 1;  // so are a and b: log 1 / -log 1
  const double n = static_cast<double>(docs);
  const double p = static_cast<double>(both) / n;
  return std::log(p / ((static_cast<double>(a) / n) * (static_cast<double>(b) / n))) / -std::log(p);
}

double MeanOfNumbers(const std::vector<double>& xs) {
  double sum = 0;
  size_t n = 0;
  for (double x : xs) {
    if (std::isnan(x)) continue;
    sum += x;
    ++n;
  }
  return n == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(n);
}

// The documents of each word with a slot, in slot order; the slots are the top words.
std::vector<DocSet> DocumentsOf(const Corpus& corpus, const std::vector<uint32_t>& slot, size_t slots) {
  std::vector<DocSet> sets(slots);
  for (size_t d = 0; d < corpus.num_docs(); ++d) {
    for (uint32_t w : corpus.doc(d)) {
      if (w >= slot.size() || slot[w] == kNone) continue;
      auto& list = sets[slot[w]].list;
      if (list.empty() || list.back() != d) list.push_back(static_cast<uint32_t>(d));
    }
  }
  const uint64_t docs = corpus.num_docs();
  for (DocSet& set : sets) {
    set.size = set.list.size();
    if (set.size * 32 <= docs) continue;
    set.bits.assign((docs + 63) / 64, 0);
    for (uint32_t d : set.list) set.bits[d / 64] |= uint64_t{1} << (d % 64);
    std::vector<uint32_t>().swap(set.list);
  }
  return sets;
}

}  // namespace

Coherence TopicCoherence(const Corpus& corpus, const std::vector<std::vector<uint32_t>>& top_words) {
  std::vector<uint32_t> slot(corpus.vocab.size(), kNone);
  uint32_t slots = 0;
  for (const auto& words : top_words) {
    for (uint32_t w : words) {
      if (w >= slot.size()) throw InvalidArgumentError("coherence: a top word is outside the vocabulary");
      if (slot[w] == kNone) slot[w] = slots++;
    }
  }
  const std::vector<DocSet> docs_of = DocumentsOf(corpus, slot, slots);
  const uint64_t docs = corpus.num_docs();
  // Topics share their frequent words, so each pair is counted once.
  std::unordered_map<uint64_t, uint64_t> counted;
  auto together = [&](uint32_t a, uint32_t b) {
    const uint64_t key = (uint64_t{std::min(a, b)} << 32) | std::max(a, b);
    auto [it, fresh] = counted.try_emplace(key, 0);
    if (fresh) it->second = Together(docs_of[a], docs_of[b]);
    return it->second;
  };
  Coherence c;
  for (const auto& words : top_words) {
    double umass = 0, npmi = 0;
    uint64_t pairs = 0;
    for (size_t m = 1; m < words.size(); ++m) {
      const auto& later = docs_of[slot[words[m]]];
      for (size_t l = 0; l < m; ++l) {
        const auto& earlier = docs_of[slot[words[l]]];
        const uint64_t both = together(slot[words[m]], slot[words[l]]);
        // A word of no document (a vocabulary given with the corpus) counts as in one.
        umass += std::log(static_cast<double>(both + 1) /
                          static_cast<double>(std::max<uint64_t>(earlier.size, 1)));
        npmi += Npmi(both, earlier.size, later.size, docs);
        ++pairs;
      }
    }
    const double none = std::numeric_limits<double>::quiet_NaN();
    c.umass.push_back(pairs == 0 ? none : umass);
    c.npmi.push_back(pairs == 0 ? none : npmi / static_cast<double>(pairs));
  }
  c.mean_umass = MeanOfNumbers(c.umass);
  c.mean_npmi = MeanOfNumbers(c.npmi);
  return c;
}

}  // namespace parasol::apps::lda
