#include "parasol/ps/row_window.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::ps {
namespace {

// The owner's stores into its region race with readers' copies by design (the version words say
// when a copy is torn). ThreadSanitizer sees the in-process transport's memcpy of the region as a
// plain read: scripts/tsan.supp names these three.
__attribute__((noinline)) void StoreVersion(std::atomic_ref<uint64_t> word, uint64_t v,
                                            std::memory_order order) {
  word.store(v, order);
}
__attribute__((noinline)) void CopyIntoSlot(void* slot, const void* src, size_t bytes) {
  std::memcpy(slot, src, bytes);
}
// A reader's copy of its own shard's rows: the same race, from the other side.
__attribute__((noinline)) void CopyFromRegion(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}

// Runs of consecutive indices among index[i] for i in `which` (ascending): (first i, count).
std::vector<std::pair<size_t, size_t>> Runs(const std::vector<uint64_t>& index,
                                            const std::vector<size_t>& which) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t k = 0; k < which.size(); ++k) {
    const size_t i = which[k];
    if (!runs.empty() && which[k - 1] == i - 1 && index[i - 1] + 1 == index[i]) {
      ++runs.back().second;
      continue;
    }
    runs.emplace_back(i, 1);
  }
  return runs;
}

}  // namespace

RowWindow::RowWindow(comm::Transport& transport, const TableConfig& config, Deadline deadline)
    : config_(config),
      rank_(transport.rank()),
      processes_(transport.size()),
      block_(config.num_rows / static_cast<uint64_t>(processes_) +
             (config.num_rows % static_cast<uint64_t>(processes_) != 0)),
      rows_(RowsOf(rank_)),
      value_bytes_(config.width * DTypeSize(config.dtype)),
      slot_words_(static_cast<size_t>(processes_) + (value_bytes_ + 7) / 8) {
  const size_t words = 1 + rows_ + rows_ * slot_words_;
  memory_ = std::make_unique<uint64_t[]>(words);  // zeroed: every row 0, nothing applied
  region_ = transport.RegisterMemory(memory_.get(), 8 * words, deadline);
}

RowWindow::~RowWindow() {
  if (!closed_) {
    (void)region_.release();
    (void)memory_.release();
  }
}

uint64_t RowWindow::RowsOf(int shard) const {
  const uint64_t first = FirstRow(shard);
  return first >= config_.num_rows ? 0 : std::min(block_, config_.num_rows - first);
}

std::atomic_ref<uint64_t> RowWindow::Version(uint64_t index) {
  return std::atomic_ref<uint64_t>(memory_[1 + index]);
}

void RowWindow::BeginWrite(uint64_t row) {
  auto v = Version(row - FirstRow(rank_));
  StoreVersion(v, v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}

void RowWindow::EndWrite(uint64_t row) {
  auto v = Version(row - FirstRow(rank_));
  StoreVersion(v, v.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void RowWindow::Publish(uint64_t row, const Row& value, int src, uint64_t seq) {
  const uint64_t index = row - FirstRow(rank_);
  uint64_t* slot = memory_.get() + SlotOffset(rank_, index) / 8;
  BeginWrite(row);
  if (src >= 0) CopyIntoSlot(slot + src, &seq, sizeof seq);
  std::span<const std::byte> bytes = value.DenseBytes();
  CopyIntoSlot(slot + processes_, bytes.data(), bytes.size());
  EndWrite(row);
}

void RowWindow::Reset() {
  const std::vector<std::byte> zeros(value_bytes_);
  for (uint64_t index = 0; index < rows_; ++index) {
    const uint64_t row = FirstRow(rank_) + index;
    BeginWrite(row);
    CopyIntoSlot(memory_.get() + SlotOffset(rank_, index) / 8 + processes_, zeros.data(), value_bytes_);
    EndWrite(row);
  }
}

void RowWindow::PublishClock(uint64_t clock) {
  StoreVersion(std::atomic_ref<uint64_t>(memory_[0]), clock, std::memory_order_release);
}

void RowWindow::Copy(int shard, size_t offset, void* dst, size_t bytes) {
  if (shard == rank_) {
    // This process's own shard: its memory is here, so no transport is asked (over TCP even a
    // get from oneself would be a message through the loopback).
    std::atomic_thread_fence(std::memory_order_acquire);
    CopyFromRegion(dst, reinterpret_cast<const std::byte*>(memory_.get()) + offset, bytes);
    std::atomic_thread_fence(std::memory_order_acquire);
  } else {
    region_->GetFlushed(shard, offset, dst, bytes);
  }
}

void RowWindow::EndRound(int shard, Deadline deadline) {
  if (shard != rank_) region_->Flush(deadline);
}

void RowWindow::GetVersions(int shard, const std::vector<uint64_t>& index, const std::vector<size_t>& which,
                            uint64_t* clock, std::vector<uint64_t>& out, Deadline deadline) {
  if (clock) Copy(shard, 0, clock, 8);
  for (auto [first, n] : Runs(index, which)) Copy(shard, VersionOffset(index[first]), &out[first], 8 * n);
  EndRound(shard, deadline);
}

RowWindow::Result RowWindow::Read(int shard, std::span<const uint64_t> rows, Deadline deadline) {
  try {
    return ReadRounds(shard, rows, deadline);
  } catch (const PeerGoneError& e) {
    throw PeerGoneError(fmt::format("rank {}: one-sided read of {} from shard {} (rank {}): {}", rank_,
                                    config_.Describe(), shard, shard, e.what()));
  }
}

RowWindow::Result RowWindow::ReadRounds(int shard, std::span<const uint64_t> rows, Deadline deadline) {
  MutexLock lock(read_mu_);
  const uint64_t first_row = FirstRow(shard);
  const size_t n = rows.size();
  std::vector<uint64_t> index(n);
  std::vector<size_t> which(n);
  for (size_t i = 0; i < n; ++i) {
    if (rows[i] < first_row || rows[i] - first_row >= RowsOf(shard)) {
      throw InvalidArgumentError(fmt::format("rank {}: one-sided read: row {} of {} is not on shard {}",
                                             rank_, rows[i], config_.Describe(), shard));
    }
    index[i] = rows[i] - first_row;
    which[i] = i;
  }
  // Consecutive runs must be ascending in `which` order: sort the positions by row.
  std::sort(which.begin(), which.end(), [&](size_t a, size_t b) { return index[a] < index[b]; });
  std::vector<uint64_t> before(n), after(n), slots(n * slot_words_);
  Result result;
  result.values.resize(n);
  result.applied.resize(n);
  bool first_round = true;
  while (!which.empty()) {
    uint64_t clock = 0;
    GetVersions(shard, index, which, &clock, before, deadline);
    if (first_round) result.clock = clock;
    first_round = false;
    for (auto [first, count] : Runs(index, which)) {
      Copy(shard, SlotOffset(shard, index[first]), &slots[first * slot_words_], 8 * slot_words_ * count);
    }
    EndRound(shard, deadline);
    GetVersions(shard, index, which, nullptr, after, deadline);
    std::vector<size_t> again;
    for (size_t i : which) {
      if (before[i] != after[i] || before[i] % 2 != 0) {
        again.push_back(i);
        continue;
      }
      const uint64_t* slot = &slots[i * slot_words_];
      result.applied[i] = slot[rank_];
      Row& value = result.values[i];
      value = Row(RowKind::kDense, config_.dtype, config_.width);
      std::memcpy(value.MutableDenseBytes().data(), slot + processes_, value_bytes_);
    }
    result.retries += again.size();
    which.swap(again);
    if (!which.empty()) std::this_thread::yield();  // the owner is writing those rows: let it finish
    if (!which.empty() && deadline.Expired()) {
      throw TimeoutError(fmt::format(
          "rank {}: one-sided read of row {} of {}: shard {} (rank {}) was still writing it at the deadline",
          rank_, rows[which.front()], config_.Describe(), shard, shard));
    }
  }
  return result;
}

void RowWindow::Close(Deadline deadline) {
  if (closed_) return;
  region_->Close(deadline);
  closed_ = true;
  region_.reset();
  memory_.reset();
}

}  // namespace parasol::ps
