// A small, fast generator for inner loops (wyrand): one 64x64->128 multiply per draw, good
// enough statistically for Monte Carlo and SGD's orders, and seeded per (seed, rank, thread,
// iteration) so that a resumed run draws the same numbers as an uninterrupted one. The LDA
// samplers draw topics with it; MF shuffles its passes with it (std::mt19937_64 and
// std::shuffle were a tenth of an MF pass).
#pragma once

#include <cstdint>
#include <span>
#include <utility>

namespace parasol {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {
    for (int i = 0; i < 4; ++i) Next();
  }
  Rng(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
      : Rng(Mix(Mix(Mix(seed) ^ a) ^ (b << 20)) ^ Mix(c + 0x9e3779b97f4a7c15ull)) {}

  uint64_t Next() {
    s_ += 0xa0761d6478bd642full;
    __uint128_t m = static_cast<__uint128_t>(s_) * (s_ ^ 0xe7037ed1a0b428dbull);
    return static_cast<uint64_t>(m >> 64) ^ static_cast<uint64_t>(m);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n).
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(((Next() >> 32) * n) >> 32); }

 private:
  static uint64_t Mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  uint64_t s_;
};

// Fisher-Yates: every order of `items` (fewer than 2^32) alike, up to Below's bias of n / 2^32.
template <typename T>
void Shuffle(std::span<T> items, Rng& rng) {
  for (size_t i = items.size(); i > 1; --i) {
    const uint32_t j = rng.Below(static_cast<uint32_t>(i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace parasol
