// torch's default generator is one per process: every model parasol builds draws its initial
// values from it after seeding it. Ranks that are threads of one process (the in-process tests)
// would interleave their seeds and draws, so a model is built while holding this lock, and every
// builder takes the same one: two locks would not exclude each other.
#pragma once

#include <cstdint>
#include <mutex>

namespace parasol::dl {

// Seeds torch's default generator and holds the process's lock on it until destroyed.
class SeededTorchGenerator {
 public:
  explicit SeededTorchGenerator(uint64_t seed);
  SeededTorchGenerator(const SeededTorchGenerator&) = delete;
  SeededTorchGenerator& operator=(const SeededTorchGenerator&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace parasol::dl
