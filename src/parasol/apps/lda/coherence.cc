#include "parasol/apps/lda/coherence.h"

#include <cmath>
#include <limits>

#include "parasol/core/error.h"

namespace parasol::apps::lda {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// Documents holding both words: the two sorted lists merged.
uint64_t Together(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
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

}  // namespace

Coherence TopicCoherence(const Corpus& corpus, const std::vector<std::vector<uint32_t>>& top_words) {
  // The documents of each word some topic names, in document order.
  std::vector<uint32_t> slot(corpus.vocab.size(), kNone);
  std::vector<std::vector<uint32_t>> docs_of;
  for (const auto& words : top_words) {
    for (uint32_t w : words) {
      if (w >= slot.size()) throw InvalidArgumentError("coherence: a top word is outside the vocabulary");
      if (slot[w] == kNone) {
        slot[w] = static_cast<uint32_t>(docs_of.size());
        docs_of.emplace_back();
      }
    }
  }
  for (size_t d = 0; d < corpus.num_docs(); ++d) {
    for (uint32_t w : corpus.doc(d)) {
      if (w >= slot.size() || slot[w] == kNone) continue;
      auto& list = docs_of[slot[w]];
      if (list.empty() || list.back() != d) list.push_back(static_cast<uint32_t>(d));
    }
  }
  const uint64_t docs = corpus.num_docs();
  Coherence c;
  for (const auto& words : top_words) {
    double umass = 0, npmi = 0;
    uint64_t pairs = 0;
    for (size_t m = 1; m < words.size(); ++m) {
      const auto& later = docs_of[slot[words[m]]];
      for (size_t l = 0; l < m; ++l) {
        const auto& earlier = docs_of[slot[words[l]]];
        const uint64_t both = Together(later, earlier);
        // A word of no document (a vocabulary given with the corpus) counts as in one.
        umass += std::log(static_cast<double>(both + 1) /
                          static_cast<double>(std::max<size_t>(earlier.size(), 1)));
        npmi += Npmi(both, earlier.size(), later.size(), docs);
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
