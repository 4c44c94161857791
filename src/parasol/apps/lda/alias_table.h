// Walker/Vose alias tables: O(1) draws from a discrete distribution after an O(n) build. The
// sampler keeps one per word (over the word's nonzero topics) in a flat arena.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "parasol/core/rng.h"

namespace parasol::apps::lda {

struct AliasEntry {
  float threshold;  // keep `topic` when a uniform draw in [0, 1) is below this
  uint32_t topic;
  uint32_t alias;
};

// Buffers reused between builds.
struct AliasScratch {
  std::vector<uint32_t> index;
  std::vector<double> scaled;
};

// Appends to `arena` the table of `topics` with weights `weights` (same length, all > 0, not
// empty); returns the sum of the weights.
double BuildAlias(std::span<const uint32_t> topics, std::span<const double> weights,
                  std::vector<AliasEntry>& arena, AliasScratch& scratch);

// `r`: 64 random bits (the upper half picks the entry, the lower half decides topic or alias).
inline uint32_t DrawAlias(const AliasEntry* table, uint32_t size, uint64_t r) {
  const AliasEntry& e = table[((r >> 32) * size) >> 32];
  return static_cast<float>(static_cast<uint32_t>(r)) * 0x1.0p-32f < e.threshold ? e.topic : e.alias;
}

}  // namespace parasol::apps::lda
