// Least-recently-used cache of kernel columns within a byte budget (LIBSVM's -m): SMO asks for the
// same few columns again and again, and computing one costs a pass over the data.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace parasol::apps::svm {

// Columns of `length` floats, keyed by a sample id in [0, keys). A column may be "partial": only
// the entries of the rows active when it was computed hold values (sample elimination only ever
// shrinks that set, so a partial column stays good until the set grows back: DropPartial()).
//
// Threading: one thread at a time.
class KernelCache {
 public:
  // Holds budget_bytes / (4 x length) columns, at least 2 (SMO uses two at once), at most `keys`;
  // memory is taken as columns are first stored.
  KernelCache(size_t keys, size_t length, uint64_t budget_bytes);

  // Key's column, made the most recently used, or nullptr if absent; *full says whether it is.
  float* Find(uint32_t key, bool* full);
  // Records that key's (cached) column now holds every entry.
  void MarkFull(uint32_t key);
  // A column for key, to be filled by the caller: key's own if present, else the least recently
  // used one's. The most recently used column is never taken.
  float* Insert(uint32_t key, bool full);
  // Forgets the partial columns.
  void DropPartial();

  size_t capacity() const { return slots_.size(); }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  struct Slot {
    int64_t key = -1;
    bool full = false;
    int32_t prev = -1, next = -1;  // the recency list: head_ most recent
    std::unique_ptr<float[]> values;
  };
  void Unlink(int32_t s);
  void PushFront(int32_t s);

  size_t length_;
  std::vector<Slot> slots_;
  std::vector<int32_t> slot_of_;  // per key, -1 when not cached
  int32_t head_ = -1, tail_ = -1;
  size_t used_ = 0;  // slots that have held a column
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace parasol::apps::svm
