// Word-topic counts n_wk with topic totals n_k: dense rows (K counts) for frequent words, sparse
// rows (the nonzero (topic, count) pairs, at most min(K, n_w) of them) for rare ones, so that the
// model's size follows the corpus rather than V x K.
//
// Threading: a row is changed by one thread at a time (the trainer gives each thread its own
// words in each round); reading rows another thread changes at the same time is not allowed.
// Counts never go below zero while every change moves a token that was counted.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace parasol::apps::lda {

class WordTopicTable {
 public:
  WordTopicTable() = default;
  // `word_counts[w]`: tokens of word w the table will ever count (the corpus-wide total); rows of
  // words with at least `dense_min_count` tokens are dense. Only words with `(*resident)[w]` (all
  // when null) get storage.
  WordTopicTable(uint32_t num_topics, std::span<const uint64_t> word_counts, uint64_t dense_min_count,
                 const std::vector<bool>* resident = nullptr);

  uint32_t num_topics() const { return k_; }
  size_t num_words() const { return rows_.size(); }
  bool dense(uint32_t w) const { return rows_[w].dense; }
  bool resident(uint32_t w) const { return rows_[w].dense || rows_[w].limit > 0; }
  size_t bytes() const;

  int32_t Get(uint32_t w, uint32_t k) const {
    const Row& r = rows_[w];
    if (r.dense) return dense_[r.offset + k];
    const int64_t i = Find(r, k);
    return i < 0 ? 0 : entries_[r.offset + static_cast<uint64_t>(i)].count;
  }
  // Hints for the sampler's pipeline: start loading what Get(w, k) will read.
  void PrefetchRow(uint32_t w) const { __builtin_prefetch(&rows_[w]); }
  void Prefetch(uint32_t w, uint32_t k) const {
    const Row& r = rows_[w];
    __builtin_prefetch(r.dense ? static_cast<const void*>(&dense_[r.offset + k])
                               : static_cast<const void*>(&entries_[r.offset + Home(k, r)]));
  }
  // REQUIRES: the count stays >= 0, and a sparse row has room (it has while counts are counts).
  void Inc(uint32_t w, uint32_t k) {
    Row& r = rows_[w];
    if (r.dense) {
      ++dense_[r.offset + k];
      return;
    }
    const int64_t i = Find(r, k);
    if (i >= 0) {
      ++entries_[r.offset + static_cast<uint64_t>(i)].count;
    } else {
      Insert(r, Entry{k, 1});
    }
  }
  void Dec(uint32_t w, uint32_t k) {
    Row& r = rows_[w];
    if (r.dense) {
      --dense_[r.offset + k];
      return;
    }
    const auto i = static_cast<uint32_t>(Find(r, k));
    if (--entries_[r.offset + i].count == 0) Erase(r, i);
  }
  // Adds `delta` (any sign) to n_wk; for loading rows. Throws InvalidArgumentError if a count
  // would go below zero or a sparse row would overflow.
  void Add(uint32_t w, uint32_t k, int64_t delta);
  // Calls fn(k, n_wk) for every nonzero count of row w.
  template <typename Fn>
  void ForEachNonzero(uint32_t w, Fn&& fn) const {
    const Row& r = rows_[w];
    if (r.dense) {
      const int32_t* c = dense_.data() + r.offset;
      for (uint32_t k = 0; k < k_; ++k) {
        if (c[k] != 0) fn(k, c[k]);
      }
    } else if (r.size > 0) {
      const Entry* e = entries_.data() + r.offset;
      for (uint32_t i = 0; i <= r.mask; ++i) {
        if (e[i].topic != kEmpty) fn(e[i].topic, e[i].count);
      }
    }
  }
  // Writes row w's nonzero (topic, count) pairs to `out` (room for the row's slots: K for a dense
  // row, at most 2 min(n_w, K) rounded up to a power of two for a sparse one, see slots()) and
  // returns how many; dense rows in topic order. Branch-free: half-empty hash rows and random
  // zeros would otherwise cost a mispredicted branch per slot.
  size_t CopyNonzero(uint32_t w, std::pair<uint32_t, int32_t>* out) const {
    const Row& r = rows_[w];
    size_t n = 0;
    if (r.dense) {
      const int32_t* c = dense_.data() + r.offset;
      for (uint32_t k = 0; k < k_; ++k) {
        out[n] = {k, c[k]};
        n += c[k] != 0;
      }
    } else if (r.mask != 0) {
      const Entry* e = entries_.data() + r.offset;
      for (uint32_t i = 0; i <= r.mask; ++i) {
        out[n] = {e[i].topic, e[i].count};
        n += e[i].topic != kEmpty;
      }
    }
    return n;
  }
  // Upper bound of CopyNonzero's count for any row.
  size_t max_slots() const { return max_slots_; }
  // Zeroes row w.
  void ClearRow(uint32_t w);
  // Dense rows: the K counts.
  const int32_t* DenseRow(uint32_t w) const { return dense_.data() + rows_[w].offset; }

 private:
  // Sparse rows are open-addressing hash tables (Fibonacci hashing, linear probing kept in Robin
  // Hood order with ties broken by topic) of at least twice the entries they can hold: a lookup
  // costs about one probe whatever the row's size, a miss stops early, and the layout depends
  // only on the row's topics, not on the order they came in, so walking the slots gives the same
  // sequence after a resume as in an uninterrupted run (alias tables built from it then match).
  static constexpr uint32_t kEmpty = 0xffffffffu;
  struct Entry {
    uint32_t topic;
    int32_t count;
  };
  struct Row {
    uint64_t offset = 0;
    uint32_t mask = 0;   // sparse: slots - 1 (0 with no slots)
    uint32_t size = 0;   // sparse: entries in use (all nonzero)
    uint32_t limit = 0;  // sparse: entries it may hold
    uint8_t shift = 32;  // sparse: 32 - log2(slots)
    bool dense = false;
  };
  static uint32_t Home(uint32_t k, const Row& r) {
    return (k * 0x9e3779b1u) >> r.shift;  // slots >= 2, so shift <= 31
  }
  // Probe distance of the entry for topic k sitting in slot i.
  static uint32_t Distance(uint32_t k, uint32_t i, const Row& r) { return (i - Home(k, r)) & r.mask; }
  // The slot holding topic k in sparse row r, or -1.
  int64_t Find(const Row& r, uint32_t k) const {
    if (r.mask == 0) return -1;  // no storage: not resident
    const Entry* e = entries_.data() + r.offset;
    for (uint32_t i = Home(k, r), d = 0;; i = (i + 1) & r.mask, ++d) {
      const uint32_t t = e[i].topic;
      if (t == k) return i;
      if (t == kEmpty) return -1;
      const uint32_t dt = Distance(t, i, r);
      if (dt < d || (dt == d && t > k)) return -1;  // k would sit here
    }
  }
  // Adds an entry for a topic the row does not hold.
  void Insert(Row& r, Entry x);
  // Removes slot i of a sparse row, shifting back the entries after it that probed past it.
  void Erase(Row& r, uint32_t i);

  uint32_t k_ = 0;
  std::vector<Row> rows_;
  std::vector<int32_t> dense_;
  std::vector<Entry> entries_;
  size_t max_slots_ = 0;
};

}  // namespace parasol::apps::lda
