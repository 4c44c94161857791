#include "parasol/apps/lda/block_ring.h"

#include <algorithm>

#include <fmt/format.h>

#include "parasol/comm/transport.h"
#include "parasol/core/clock.h"
#include "parasol/core/error.h"

namespace parasol::apps::lda {

namespace {

constexpr comm::Tag kBlockTag = 1;
constexpr comm::Tag kGatherTag = 2;
// Packing goes through a small buffer a chunk at a time: a chunk's 2-byte topics overlap its own
// 4-byte ones near the array's start.
constexpr size_t kPackChunk = 4096;

// topics[0, n) (each below 65,536) to 2 bytes each in the array's first 2 n bytes. Forwards: chunk
// [a, b) writes bytes [2a, 2b), before any later chunk's topics (from byte 4b on).
void Pack(uint32_t* topics, size_t n) {
  auto* bytes = reinterpret_cast<unsigned char*>(topics);
  uint16_t narrow[kPackChunk];
  for (size_t a = 0; a < n; a += kPackChunk) {
    const size_t len = std::min(kPackChunk, n - a);
    for (size_t i = 0; i < len; ++i) narrow[i] = static_cast<uint16_t>(topics[a + i]);
    std::memcpy(bytes + 2 * a, narrow, 2 * len);
  }
}

// The inverse. Backwards: chunk [a, b) writes bytes [4a, 4b), after every earlier chunk's 2-byte
// topics (below byte 2a).
void Unpack(uint32_t* topics, size_t n) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(topics);
  uint16_t narrow[kPackChunk];
  for (size_t end = n; end > 0;) {
    const size_t a = end > kPackChunk ? end - kPackChunk : 0, len = end - a;
    std::memcpy(narrow, bytes + 2 * a, 2 * len);
    for (size_t i = 0; i < len; ++i) topics[a + i] = narrow[i];
    end = a;
  }
}

}  // namespace

BlockRing::BlockRing(comm::Context& ctx, std::vector<uint32_t> sizes, uint32_t topics,
                     std::chrono::milliseconds timeout_ms)
    : ctx_(ctx.Duplicate(Deadline::After(timeout_ms))),
      rank_(ctx.rank()),
      size_(ctx.size()),
      sizes_(std::move(sizes)),
      per_process_(static_cast<uint32_t>(sizes_.size()) / static_cast<uint32_t>(ctx.size())),
      packed_(topics <= 65536),
      timeout_ms_(timeout_ms) {
  // Every array can hold the largest block: an array takes each block in turn, and one that grew
  // in a hand-over was reallocated, its old blocks copied and its new pages zeroed on the main
  // thread (0.5 s at a step's end on two hosts of 200 M tokens, where the first block holds 1.2x
  // the mean). Reserving touches no page.
  const uint32_t largest = *std::max_element(sizes_.begin(), sizes_.end());
  for (uint32_t i = 0; i < per_process_; ++i) {
    const uint32_t id = static_cast<uint32_t>(rank_) * per_process_ + i;
    Block b{id, {}};
    b.topics.reserve(largest);
    b.topics.resize(sizes_[id], 0);
    held_.push_back(std::move(b));
  }
  // The buffer the first block arrives in, made (and its pages touched) now rather than in the
  // first iteration's hand-over, where fresh pages cost the sampling (1 s at 200 MB on this VM).
  if (size_ > 1) incoming_.topics.resize(largest);
  NotePeak();
}

BlockRing::~BlockRing() {
  comm::Transport& t = ctx_->transport();
  if (send_.valid()) t.Cancel(send_);
  if (recv_.valid()) t.Cancel(recv_);
}

void BlockRing::NotePeak() {
  size_t words = 0;
  for (const Block& b : held_) words += b.topics.size();
  if (pending_) words += leaving_.topics.size() + incoming_.topics.size();
  peak_bytes_ = std::max(peak_bytes_, words * sizeof(uint32_t));
}

void BlockRing::Rotate() {
  if (size_ == 1) {  // one process: the blocks only take turns
    held_.push_back(std::move(held_.front()));
    held_.pop_front();
    return;
  }
  if (pending_) Complete();
  comm::Transport& t = ctx_->transport();
  leaving_ = std::move(held_.front());
  held_.pop_front();
  const uint32_t next = (leaving_.id + per_process_) % blocks();
  incoming_.id = next;
  incoming_.topics.resize(sizes_[next]);
  const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
  const size_t width = packed_ ? 2 : sizeof(uint32_t);
  if (packed_) Pack(leaving_.topics.data(), leaving_.topics.size());
  send_ = t.Isend(left, kBlockTag, leaving_.topics.data(), leaving_.topics.size() * width);
  bytes_sent_ += leaving_.topics.size() * width;
  recv_ = t.Irecv(right, kBlockTag, incoming_.topics.data(), incoming_.topics.size() * width);
  pending_ = true;
  NotePeak();
  if (held_.empty()) Complete();
}

void BlockRing::Poll() {
  if (!pending_) return;
  comm::Transport& t = ctx_->transport();
  if (send_.valid()) t.Test(send_);
  if (recv_.valid()) t.Test(recv_);
}

void BlockRing::Complete() {
  comm::Transport& t = ctx_->transport();
  Clock& clock = ctx_->env().clock();
  const Clock::TimePoint start = clock.Now();
  const Deadline deadline = Deadline::After(timeout_ms_);
  const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
  if (recv_.valid())
    comm::Wait(t, recv_, deadline,
               fmt::format("lda: receive word block {} from rank {}", incoming_.id, right));
  if (send_.valid())
    comm::Wait(t, send_, deadline, fmt::format("lda: hand word block {} to rank {}", leaving_.id, left));
  wait_seconds_ += std::chrono::duration<double>(clock.Now() - start).count();
  if (packed_) Unpack(incoming_.topics.data(), incoming_.topics.size());
  held_.push_back(std::move(incoming_));
  // The leaving block's array is reused for the next arrival (blocks are about the same size).
  incoming_ = std::move(leaving_);
  leaving_ = Block{};
  pending_ = false;
}

void BlockRing::Settle() {
  if (pending_) Complete();
}

void BlockRing::ForEachHeld(const std::function<void(uint32_t, const uint32_t*)>& fn) const {
  for (const Block& b : held_) fn(b.id, b.topics.data());
}

void BlockRing::ForEachReadable(const std::function<void(uint32_t, const uint32_t*)>& fn,
                                const std::function<void(uint32_t, PackedTopics)>& packed) const {
  for (const Block& b : held_) fn(b.id, b.topics.data());
  if (!pending_) return;
  if (packed_) {
    packed(leaving_.id, PackedTopics{reinterpret_cast<const unsigned char*>(leaving_.topics.data())});
  } else {
    fn(leaving_.id, leaving_.topics.data());
  }
}

void BlockRing::FillHeld(const std::function<void(uint32_t, uint32_t*)>& fn) {
  for (Block& b : held_) fn(b.id, b.topics.data());
}

// Packed as the hand-overs are (a gather at the end of a run of 200 M tokens sent 400 MB from each
// other process, 3.2 s over 1 Gbit/s); a sender widens its blocks again, for a gather mid-run.
void BlockRing::ForEachAtRoot(const std::function<void(uint32_t, const uint32_t*)>& fn) {
  Settle();
  comm::Transport& t = ctx_->transport();
  const Deadline deadline = Deadline::After(timeout_ms_);
  const size_t width = packed_ ? 2 : sizeof(uint32_t);
  if (rank_ != 0) {
    for (Block& b : held_) {
      if (packed_) Pack(b.topics.data(), b.topics.size());
      comm::Request req = t.Isend(0, kGatherTag, b.topics.data(), b.topics.size() * width);
      comm::Wait(t, req, deadline, fmt::format("lda: send word block {} to rank 0", b.id));
      if (packed_) Unpack(b.topics.data(), b.topics.size());
    }
    return;
  }
  for (const Block& b : held_) fn(b.id, b.topics.data());
  // Every rank has rotated as often as this one: rank p holds the blocks p * per_process_ + r + i
  // (mod the blocks) after r rotations, i < per_process_, in that order, as rank 0 holds r + i.
  const uint32_t r = held_.front().id;
  std::vector<uint32_t> topics;
  for (int p = 1; p < size_; ++p) {
    for (uint32_t i = 0; i < per_process_; ++i) {
      const uint32_t id = (static_cast<uint32_t>(p) * per_process_ + r + i) % blocks();
      topics.resize(sizes_[id]);
      comm::Request req = t.Irecv(p, kGatherTag, topics.data(), topics.size() * width);
      comm::Wait(t, req, deadline, fmt::format("lda: receive word block {} from rank {}", id, p));
      if (packed_) Unpack(topics.data(), topics.size());
      fn(id, topics.data());
    }
  }
}

}  // namespace parasol::apps::lda
