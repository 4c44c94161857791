#include "parasol/apps/lda/block_ring.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "parasol/comm/transport.h"
#include "parasol/core/clock.h"
#include "parasol/core/error.h"

namespace parasol::apps::lda {

namespace {

constexpr comm::Tag kBlockTag = 1;
constexpr comm::Tag kGatherTag = 2;
constexpr comm::Tag kRunCountsTag = 3;
constexpr comm::Tag kRunsTag = 4;
// Packing and widening go through a small buffer a chunk at a time: a chunk's 2-byte topics
// overlap its own 4-byte ones near the array's start.
constexpr size_t kPackChunk = 4096;

// topics[0, n) (each below 65,536) to 2 bytes each at out[0, 2 n), which may be topics' own first
// bytes. Forwards: chunk [a, b) writes bytes [2a, 2b), before any later chunk's topics (from byte
// 4b on).
void Pack(const uint32_t* topics, size_t n, unsigned char* out) {
  uint16_t narrow[kPackChunk];
  for (size_t a = 0; a < n; a += kPackChunk) {
    const size_t len = std::min(kPackChunk, n - a);
    for (size_t i = 0; i < len; ++i) narrow[i] = static_cast<uint16_t>(topics[a + i]);
    std::memcpy(out + 2 * a, narrow, 2 * len);
  }
}

// n topics packed at index `from` of `topics` (bytes 2 from on) widened to topics[to, to + n),
// to >= from. Backwards: chunk [a, b) writes bytes from 4 (to + a) on, after every 2-byte topic
// not yet read (below byte 2 (from + a)).
void WidenBack(uint32_t* topics, size_t from, size_t to, size_t n) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(topics) + 2 * from;
  uint16_t narrow[kPackChunk];
  for (size_t end = n; end > 0;) {
    const size_t a = end > kPackChunk ? end - kPackChunk : 0, len = end - a;
    std::memcpy(narrow, bytes + 2 * a, 2 * len);
    for (size_t i = 0; i < len; ++i) topics[to + a + i] = narrow[i];
    end = a;
  }
}

// Topics [from, from + n) of a block to the `out` bytes at topic `at`, in 2 or 4 bytes.
void CopyOut(const uint32_t* topics, size_t from, size_t n, bool packed, unsigned char* out, size_t at) {
  if (packed) {
    Pack(topics + from, n, out + 2 * at);
  } else {
    std::memcpy(out + 4 * at, topics + from, 4 * n);
  }
}

// The topics of the block not in `skip` to `out`, in order: their count.
size_t Compact(const uint32_t* topics, size_t size, std::span<const BlockRun> skip, bool packed,
               unsigned char* out) {
  size_t at = 0, from = 0;
  for (const BlockRun& r : skip) {
    CopyOut(topics, from, r.at - from, packed, out, at);
    at += r.at - from;
    from = r.at + r.len;
  }
  CopyOut(topics, from, size - from, packed, out, at);
  return at + size - from;
}

// The inverse, in place: the block's topics not in `own` arrived at its start (packed or not);
// those in `own` come from own.store. Backwards, so that no topic is written over before it is read:
// an arrived topic only moves up.
void Expand(uint32_t* topics, size_t size, const OwnTokens& own, bool packed) {
  size_t arrived = size, end = size, kept = 0;
  for (const BlockRun& r : own.runs) arrived -= r.len, kept += r.len;
  auto move_up = [&](size_t to, size_t n) {  // the last n arrived topics not yet placed
    arrived -= n;
    if (packed) {
      WidenBack(topics, arrived, to, n);
    } else {
      std::memmove(topics + to, topics + arrived, 4 * n);
    }
  };
  for (auto r = own.runs.rbegin(); r != own.runs.rend(); ++r) {
    move_up(r->at + r->len, end - r->at - r->len);
    kept -= r->len;
    std::memcpy(topics + r->at, own.store + kept, 4 * size_t{r->len});
    end = r->at;
  }
  move_up(0, end);
}

// Whether each block's runs fit it: in order, within the block, not overlapping.
bool Fit(const std::vector<std::vector<BlockRun>>& runs, const std::vector<uint32_t>& sizes) {
  for (size_t b = 0; b < runs.size(); ++b) {
    uint64_t end = 0;
    for (const BlockRun& r : runs[b]) {
      if (r.at < end || uint64_t{r.at} + r.len > sizes[b]) return false;
      end = uint64_t{r.at} + r.len;
    }
  }
  return true;
}

}  // namespace

BlockRing::BlockRing(comm::Context& ctx, std::vector<uint32_t> sizes, uint32_t topics,
                     std::chrono::milliseconds timeout_ms, std::vector<OwnTokens> own)
    : ctx_(ctx.Duplicate(Deadline::After(timeout_ms))),
      rank_(ctx.rank()),
      size_(ctx.size()),
      sizes_(std::move(sizes)),
      per_process_(static_cast<uint32_t>(sizes_.size()) / static_cast<uint32_t>(ctx.size())),
      packed_(topics <= 65536),
      timeout_ms_(timeout_ms),
      own_(own.empty() ? std::vector<OwnTokens>(sizes_.size()) : std::move(own)) {
  assert(own_.size() == sizes_.size());
  assert(Fit(
      [&] {
        std::vector<std::vector<BlockRun>> runs;
        for (const OwnTokens& o : own_) runs.push_back(o.runs);
        return runs;
      }(),
      sizes_));
  for (const OwnTokens& o : own_) {
    own_tokens_.push_back(0);
    for (const BlockRun& r : o.runs) own_tokens_.back() += r.len;
  }
  LearnLeftRuns(own_);
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
  if (size_ > 1) {
    incoming_.topics.resize(largest);
    // The copy being sent, alike: the most any block sends (without the left neighbour's tokens).
    size_t most = 0;
    for (size_t b = 0; b < sizes_.size(); ++b) most = std::max<size_t>(most, sizes_[b] - left_tokens_[b]);
    outgoing_.resize(packed_ ? (most + 1) / 2 : most);
  }
  NotePeak();
}

BlockRing::~BlockRing() {
  comm::Transport& t = ctx_->transport();
  if (send_.valid()) t.Cancel(send_);
  if (recv_.valid()) t.Cancel(recv_);
}

// Two messages to the right neighbour: the number of runs in each block, then the runs.
void BlockRing::LearnLeftRuns(const std::vector<OwnTokens>& own) {
  const size_t blocks = sizes_.size();
  left_runs_.assign(blocks, {});
  left_tokens_.assign(blocks, 0);
  if (size_ == 1) return;
  comm::Transport& t = ctx_->transport();
  const Deadline deadline = Deadline::After(timeout_ms_);
  const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
  std::vector<uint32_t> counts, theirs(blocks);
  std::vector<BlockRun> runs;
  for (const OwnTokens& o : own) {
    counts.push_back(static_cast<uint32_t>(o.runs.size()));
    runs.insert(runs.end(), o.runs.begin(), o.runs.end());
  }
  comm::Request send = t.Isend(right, kRunCountsTag, counts.data(), counts.size() * sizeof(uint32_t));
  comm::Request recv = t.Irecv(left, kRunCountsTag, theirs.data(), theirs.size() * sizeof(uint32_t));
  const std::string what = fmt::format("lda: learn rank {}'s tokens of the word blocks", left);
  comm::Wait(t, recv, deadline, what);
  uint64_t all = 0, room = 0;
  for (size_t b = 0; b < blocks; ++b) all += theirs[b], room += sizes_[b];
  // A run holds a token at least: more runs than tokens cannot fit, and are not allocated for.
  if (all > room)
    throw MismatchError(fmt::format("rank {}: {}: {} runs in {} tokens", rank_, what, all, room));
  std::vector<BlockRun> flat(all);
  comm::Request send_runs = t.Isend(right, kRunsTag, runs.data(), runs.size() * sizeof(BlockRun));
  comm::Request recv_runs = t.Irecv(left, kRunsTag, flat.data(), flat.size() * sizeof(BlockRun));
  comm::Wait(t, recv_runs, deadline, what);
  comm::Wait(t, send, deadline, what);
  comm::Wait(t, send_runs, deadline, what);
  size_t at = 0;
  for (size_t b = 0; b < blocks; ++b) {
    left_runs_[b].assign(flat.begin() + static_cast<ptrdiff_t>(at),
                         flat.begin() + static_cast<ptrdiff_t>(at + theirs[b]));
    at += theirs[b];
    for (const BlockRun& r : left_runs_[b]) left_tokens_[b] += r.len;
  }
  if (!Fit(left_runs_, sizes_)) {
    throw MismatchError(
        fmt::format("rank {}: {}: they do not fit the blocks (other sizes, or overlapping)", rank_, what));
  }
}

void BlockRing::NotePeak() {
  size_t words = 0;
  for (const Block& b : held_) words += b.topics.size();
  if (pending_) words += leaving_.topics.size() + incoming_.topics.size() + outgoing_.size();
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
  const uint32_t b = leaving_.id, next = (b + per_process_) % blocks();
  const uint32_t* z = leaving_.topics.data();
  size_t kept = 0;
  for (const BlockRun& r : own_[b].runs) {
    std::memcpy(own_[b].store + kept, z + r.at, 4 * size_t{r.len});
    kept += r.len;
  }
  const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
  const size_t width = packed_ ? 2 : sizeof(uint32_t);
  auto* out = reinterpret_cast<unsigned char*>(outgoing_.data());
  const size_t sent = Compact(z, leaving_.topics.size(), left_runs_[b], packed_, out);
  assert(sent == sizes_[b] - left_tokens_[b]);
  send_ = t.Isend(left, kBlockTag, out, sent * width);
  bytes_sent_ += sent * width;
  incoming_.id = next;
  incoming_.topics.resize(sizes_[next]);
  recv_ = t.Irecv(right, kBlockTag, incoming_.topics.data(), (sizes_[next] - own_tokens_[next]) * width);
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
  Expand(incoming_.topics.data(), incoming_.topics.size(), own_[incoming_.id], packed_);
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

void BlockRing::ForEachReadable(const std::function<void(uint32_t, const uint32_t*)>& fn) const {
  for (const Block& b : held_) fn(b.id, b.topics.data());
  if (pending_) fn(leaving_.id, leaving_.topics.data());
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
      if (packed_) Pack(b.topics.data(), b.topics.size(), reinterpret_cast<unsigned char*>(b.topics.data()));
      comm::Request req = t.Isend(0, kGatherTag, b.topics.data(), b.topics.size() * width);
      comm::Wait(t, req, deadline, fmt::format("lda: send word block {} to rank 0", b.id));
      if (packed_) WidenBack(b.topics.data(), 0, 0, b.topics.size());
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
      if (packed_) WidenBack(topics.data(), 0, 0, topics.size());
      fn(id, topics.data());
    }
  }
}

}  // namespace parasol::apps::lda
