#include "parasol/core/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdlib>

namespace parasol {

namespace {

size_t RoundUp(size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

}  // namespace

void* AllocateHugePages(size_t bytes) {
  if (bytes < kHugePageBytes) {
    void* p = std::malloc(bytes == 0 ? 1 : bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  // Advised before anything touches it: pages are then faulted in as huge pages (a block advised
  // after being written waits for the kernel's background collapse).
  const size_t rounded = RoundUp(bytes);  // aligned_alloc takes whole multiples of the alignment
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
  if (p == nullptr) throw std::bad_alloc();
  madvise(p, rounded, MADV_HUGEPAGE);  // advice: a kernel without it leaves plain pages
  return p;
}

void FreeHugePages(void* p) { std::free(p); }

}  // namespace parasol
