#include "parasol/apps/svm/kernel_cache.h"

#include <algorithm>

namespace parasol::apps::svm {

KernelCache::KernelCache(size_t keys, size_t length, uint64_t budget_bytes)
    : length_(std::max<size_t>(length, 1)), slot_of_(keys, -1) {
  const uint64_t columns = budget_bytes / (sizeof(float) * length_);
  slots_.resize(std::max<size_t>(2, std::min<uint64_t>(columns, std::max<size_t>(keys, 2))));
}

void KernelCache::Unlink(int32_t s) {
  Slot& slot = slots_[static_cast<size_t>(s)];
  if (slot.prev >= 0)
    slots_[static_cast<size_t>(slot.prev)].next = slot.next;
  else
    head_ = slot.next;
  if (slot.next >= 0)
    slots_[static_cast<size_t>(slot.next)].prev = slot.prev;
  else
    tail_ = slot.prev;
  slot.prev = slot.next = -1;
}

void KernelCache::PushFront(int32_t s) {
  Slot& slot = slots_[static_cast<size_t>(s)];
  slot.prev = -1;
  slot.next = head_;
  if (head_ >= 0) slots_[static_cast<size_t>(head_)].prev = s;
  head_ = s;
  if (tail_ < 0) tail_ = s;
}

float* KernelCache::Find(uint32_t key, bool* full) {
  const int32_t s = slot_of_[key];
  if (s < 0) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  Unlink(s);
  PushFront(s);
  *full = slots_[static_cast<size_t>(s)].full;
  return slots_[static_cast<size_t>(s)].values.get();
}

void KernelCache::MarkFull(uint32_t key) {
  if (slot_of_[key] >= 0) slots_[static_cast<size_t>(slot_of_[key])].full = true;
}

float* KernelCache::Insert(uint32_t key, bool full) {
  int32_t s = slot_of_[key];
  if (s < 0) {
    if (used_ < slots_.size()) {
      s = static_cast<int32_t>(used_++);
      slots_[static_cast<size_t>(s)].values = std::make_unique<float[]>(length_);
    } else {
      s = tail_;  // capacity >= 2: never the most recent column, which the caller may hold
      const int64_t old = slots_[static_cast<size_t>(s)].key;
      if (old >= 0) slot_of_[static_cast<size_t>(old)] = -1;
      Unlink(s);
    }
    slots_[static_cast<size_t>(s)].key = key;
    slot_of_[key] = s;
  } else {
    Unlink(s);
  }
  PushFront(s);
  slots_[static_cast<size_t>(s)].full = full;
  return slots_[static_cast<size_t>(s)].values.get();
}

void KernelCache::DropPartial() {
  for (size_t s = 0; s < used_; ++s) {
    Slot& slot = slots_[s];
    if (slot.key < 0 || slot.full) continue;
    slot_of_[static_cast<size_t>(slot.key)] = -1;
    slot.key = -1;
    // Keep the slot (and its memory) in the list, least recent: the next Insert reuses it.
    Unlink(static_cast<int32_t>(s));
    slot.prev = tail_;
    if (tail_ >= 0) slots_[static_cast<size_t>(tail_)].next = static_cast<int32_t>(s);
    tail_ = static_cast<int32_t>(s);
    if (head_ < 0) head_ = tail_;
  }
}

}  // namespace parasol::apps::svm
