// A small, fast generator for the samplers' inner loops (wyrand): one 64x64->128 multiply per
// draw, good enough statistically for Monte Carlo, and seeded per (seed, rank, thread, iteration)
// so that a resumed run draws the same numbers as an uninterrupted one.
#pragma once

#include <cstdint>

namespace parasol::apps::lda {

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

}  // namespace parasol::apps::lda
