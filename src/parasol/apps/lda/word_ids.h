// A table from words to numbers for reading text corpora: one lookup a token, so its cost is the
// reader's. Open addressing, probed linearly, over slots of 32 bytes that hold a word's first 20
// bytes, its length and its number, so that finding a word of up to 20 letters reads one slot.
// A reader hashes a batch of words and prefetches their slots before it looks them up: on a
// vocabulary larger than the L2 each lookup misses it, and the misses then overlap.
// (std::unordered_map cost a division and a chase through its nodes a lookup: 70% of reading a
// 200 M-token corpus.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parasol::apps::lda {

class WordIds {
 public:
  WordIds();

  static uint64_t Hash(std::string_view word);
  // Starts fetching the slot a word of this hash is looked for in (until the next Add).
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]); }

  // The number stored for `word` (whose Hash is `hash`), or nullptr when it has none. Valid until
  // the next Add.
  uint32_t* Find(std::string_view word, uint64_t hash);
  uint32_t* Find(std::string_view word) { return Find(word, Hash(word)); }
  // Stores `value` for `word`, which must have none (Find first). Returns the stored value.
  uint32_t& Add(std::string_view word, uint64_t hash, uint32_t value);
  uint32_t& Add(std::string_view word, uint32_t value) { return Add(word, Hash(word), value); }

  size_t size() const { return words_.size(); }

 private:
  static constexpr uint32_t kFree = UINT32_MAX;
  static constexpr size_t kInline = 20;
  struct Slot {
    char text[kInline] = {};  // the word's first bytes, zero after its end
    uint32_t len = kFree;
    uint32_t entry = 0;  // the word in words_
    uint32_t value = 0;
  };
  static_assert(sizeof(Slot) == 32);

  bool Holds(const Slot& s, std::string_view word, const char (&head)[kInline]) const;
  size_t FreeSlot(uint64_t hash) const;
  void Grow();

  std::vector<Slot> slots_;  // a power of two long, at most 3/4 full
  std::vector<std::string> words_;
};

}  // namespace parasol::apps::lda
