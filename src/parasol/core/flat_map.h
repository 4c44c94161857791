// An open-addressing hash map from 64-bit keys to values: one probe sequence in two flat arrays,
// no allocation per entry. For the parameter server's hot paths (thread-local caches and update
// buffers, server rows, sparse rows). Key ~0 is reserved (row and column ids stay below 2^63).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace parasol {

inline uint64_t MixKey(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

template <typename V>
class FlatMap {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  FlatMap() { Rehash(16); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  V* Find(uint64_t key) {
    size_t i = Slot(key);
    while (keys_[i] != kEmpty) {
      if (keys_[i] == key) return &values_[i];
      i = (i + 1) & mask_;
    }
    return nullptr;
  }
  const V* Find(uint64_t key) const { return const_cast<FlatMap*>(this)->Find(key); }

  // The value for key, default-constructed if absent. References stay valid until the next insert.
  V& operator[](uint64_t key) {
    if ((size_ + 1) * 4 > keys_.size() * 3) Rehash(keys_.size() * 2);
    size_t i = Slot(key);
    while (keys_[i] != kEmpty) {
      if (keys_[i] == key) return values_[i];
      i = (i + 1) & mask_;
    }
    keys_[i] = key;
    values_[i] = V();
    ++size_;
    return values_[i];
  }

  // Makes room for n entries without rehashing.
  void Reserve(size_t n) {
    size_t capacity = keys_.size();
    while (n * 4 > capacity * 3) capacity *= 2;
    if (capacity != keys_.size()) Rehash(capacity);
  }

  // Removes every entry but keeps the capacity.
  void Clear() {
    if (size_ == 0) return;
    std::fill(keys_.begin(), keys_.end(), kEmpty);
    for (auto& v : values_) v = V();
    size_ = 0;
  }

  template <typename Fn>
  void ForEach(Fn&& fn) {
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] != kEmpty) fn(keys_[i], values_[i]);
    }
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] != kEmpty) fn(keys_[i], values_[i]);
    }
  }

 private:
  // Fibonacci hashing: one multiply; the high bits of the product are well mixed even for
  // sequential or strided ids.
  size_t Slot(uint64_t key) const { return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_); }

  void Rehash(size_t capacity) {
    std::vector<uint64_t> keys(capacity, kEmpty);
    std::vector<V> values(capacity);
    keys.swap(keys_);
    values.swap(values_);
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == kEmpty) continue;
      size_t j = Slot(keys[i]);
      while (keys_[j] != kEmpty) j = (j + 1) & mask_;
      keys_[j] = keys[i];
      values_[j] = std::move(values[i]);
      ++size_;
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<V> values_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

}  // namespace parasol
