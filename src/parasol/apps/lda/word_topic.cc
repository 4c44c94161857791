#include "parasol/apps/lda/word_topic.h"

#include <algorithm>
#include <bit>
#include <utility>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::apps::lda {

WordTopicTable::WordTopicTable(uint32_t num_topics, std::span<const uint64_t> word_counts,
                               uint64_t dense_min_count, const std::vector<bool>* resident)
    : k_(num_topics), rows_(word_counts.size()) {
  uint64_t dense_size = 0, sparse_size = 0;
  for (size_t w = 0; w < rows_.size(); ++w) {
    if (resident && !(*resident)[w]) continue;
    if (word_counts[w] == 0) continue;
    Row& r = rows_[w];
    if (word_counts[w] >= dense_min_count) {
      r.dense = true;
      r.limit = k_;
      r.offset = dense_size;
      dense_size += k_;
    } else {
      r.limit = static_cast<uint32_t>(std::min<uint64_t>(word_counts[w], k_));
      const uint32_t slots = std::bit_ceil(std::max<uint32_t>(2, 2 * r.limit));
      r.mask = slots - 1;
      r.shift = static_cast<uint8_t>(32 - std::countr_zero(slots));
      r.offset = sparse_size;
      sparse_size += slots;
    }
  }
  max_slots_ = k_;
  for (const Row& r : rows_) max_slots_ = std::max<size_t>(max_slots_, r.dense ? 0 : r.mask + 1);
  dense_.assign(dense_size, 0);
  entries_.assign(sparse_size, Entry{kEmpty, 0});
}

size_t WordTopicTable::bytes() const {
  return rows_.size() * sizeof(Row) + dense_.size() * sizeof(int32_t) + entries_.size() * sizeof(Entry);
}

void WordTopicTable::Insert(Row& r, Entry x) {
  Entry* e = entries_.data() + r.offset;
  for (uint32_t i = Home(x.topic, r), d = 0;; i = (i + 1) & r.mask, ++d) {
    if (e[i].topic == kEmpty) {
      e[i] = x;
      ++r.size;
      return;
    }
    const uint32_t dt = Distance(e[i].topic, i, r);
    if (dt < d || (dt == d && e[i].topic > x.topic)) {  // x ranks first here: it takes the slot
      std::swap(x, e[i]);
      d = dt;
    }
  }
}

void WordTopicTable::Erase(Row& r, uint32_t i) {
  Entry* e = entries_.data() + r.offset;
  for (uint32_t j = (i + 1) & r.mask; e[j].topic != kEmpty && Distance(e[j].topic, j, r) > 0;
       j = (j + 1) & r.mask) {
    e[i] = e[j];
    i = j;
  }
  e[i] = Entry{kEmpty, 0};
  --r.size;
}

void WordTopicTable::Add(uint32_t w, uint32_t k, int64_t delta) {
  if (w >= rows_.size() || k >= k_) {
    throw InvalidArgumentError(
        fmt::format("word-topic entry ({}, {}) outside {} words x {} topics", w, k, rows_.size(), k_));
  }
  Row& r = rows_[w];
  if (!resident(w)) throw InvalidArgumentError(fmt::format("word {} has no row here", w));
  const int64_t before = Get(w, k), now = before + delta;
  if (now < 0) throw InvalidArgumentError(fmt::format("word {} topic {}: count would be {}", w, k, now));
  if (r.dense) {
    dense_[r.offset + k] = static_cast<int32_t>(now);
    return;
  }
  if (before == 0 && now != 0 && r.size == r.limit) {
    throw InvalidArgumentError(fmt::format("word {}: more nonzero topics than its {} tokens", w, r.limit));
  }
  const int64_t i = Find(r, k);
  if (i < 0) {
    if (now != 0) Insert(r, Entry{k, static_cast<int32_t>(now)});
  } else if (now == 0) {
    Erase(r, static_cast<uint32_t>(i));
  } else {
    entries_[r.offset + static_cast<uint64_t>(i)].count = static_cast<int32_t>(now);
  }
}

void WordTopicTable::ClearRow(uint32_t w) {
  Row& r = rows_[w];
  if (r.dense) {
    std::fill_n(dense_.begin() + static_cast<ptrdiff_t>(r.offset), k_, 0);
  } else if (r.mask != 0) {
    std::fill_n(entries_.begin() + static_cast<ptrdiff_t>(r.offset), r.mask + 1, Entry{kEmpty, 0});
    r.size = 0;
  }
}

}  // namespace parasol::apps::lda
