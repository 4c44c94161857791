#include "parasol/apps/lda/word_ids.h"

#include <algorithm>
#include <cstring>

#include "parasol/core/flat_map.h"

namespace parasol::apps::lda {

namespace {

template <size_t N>
void Head(std::string_view word, char (&head)[N]) {
  std::memset(head, 0, N);
  std::memcpy(head, word.data(), std::min(N, word.size()));
}

}  // namespace

WordIds::WordIds() : slots_(1024) {}

// Eight bytes at a time, each mixed in (a word is a few of them); the last 1 to 7 bytes by loads
// that overlap rather than a copy of variable length (a call, 15% of reading a corpus).
uint64_t WordIds::Hash(std::string_view word) {
  const char* p = word.data();
  size_t n = word.size();
  uint64_t h = n;
  auto load = [](const char* at, auto v) {
    std::memcpy(&v, at, sizeof(v));
    return static_cast<uint64_t>(v);
  };
  for (; n >= 8; p += 8, n -= 8) h = MixKey(h ^ load(p, uint64_t{}));
  if (n >= 4) return MixKey(h ^ (load(p, uint32_t{}) | load(p + n - 4, uint32_t{}) << 32));
  if (n > 0) {
    const uint64_t tail =
        load(p, uint8_t{}) | load(p + n / 2, uint8_t{}) << 8 | load(p + n - 1, uint8_t{}) << 16;
    return MixKey(h ^ tail);
  }
  return h;
}

bool WordIds::Holds(const Slot& s, std::string_view word, const char (&head)[kInline]) const {
  if (s.len != word.size() || std::memcmp(s.text, head, kInline) != 0) return false;
  return word.size() <= kInline || std::string_view(words_[s.entry]).substr(kInline) == word.substr(kInline);
}

uint32_t* WordIds::Find(std::string_view word, uint64_t hash) {
  char head[kInline];
  Head(word, head);
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.len == kFree) return nullptr;
    if (Holds(s, word, head)) return &s.value;
  }
}

size_t WordIds::FreeSlot(uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  while (slots_[i].len != kFree) i = (i + 1) & mask;
  return i;
}

uint32_t& WordIds::Add(std::string_view word, uint64_t hash, uint32_t value) {
  if ((words_.size() + 1) * 4 > slots_.size() * 3) Grow();
  Slot& s = slots_[FreeSlot(hash)];
  Head(word, s.text);
  s.len = static_cast<uint32_t>(word.size());
  s.entry = static_cast<uint32_t>(words_.size());
  s.value = value;
  words_.emplace_back(word);
  return s.value;
}

void WordIds::Grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  for (const Slot& s : old) {
    if (s.len != kFree) slots_[FreeSlot(Hash(words_[s.entry]))] = s;
  }
}

}  // namespace parasol::apps::lda
