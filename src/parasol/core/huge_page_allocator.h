// An allocator whose large blocks ask the kernel for transparent huge pages (2 MB), for arrays read
// at random positions: with 4 KB pages, each read of an array much larger than the TLB's reach
// (a few MB) also misses the TLB and walks the page table. Where transparent huge pages are
// "madvise" (Debian's and Ubuntu's default), memory gets them only when asked; where they are off,
// the request is ignored and the memory is ordinary.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace parasol {

// Blocks of at least this many bytes are aligned to 2 MB and advised; smaller ones are plain.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

void* AllocateHugePages(size_t bytes);  // never null: throws std::bad_alloc
void FreeHugePages(void* p);

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT(google-explicit-constructor)
  T* allocate(size_t n) { return static_cast<T*>(AllocateHugePages(n * sizeof(T))); }
  void deallocate(T* p, size_t) { FreeHugePages(p); }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace parasol
