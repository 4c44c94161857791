// The one checksum of files parasol writes (checkpoints) and of keys it hashes: 64-bit FNV-1a.
// Not cryptographic; it catches torn and corrupted files, not tampering.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parasol {

inline constexpr uint64_t kFnvSeed = 1469598103934665603ull;

// FNV-1a of n bytes, continuing from `seed` (a previous result, to checksum pieces in turn).
inline uint64_t Fnv1a64(const void* data, size_t n, uint64_t seed = kFnvSeed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace parasol
