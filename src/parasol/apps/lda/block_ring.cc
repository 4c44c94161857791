#include "parasol/apps/lda/block_ring.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/comm/transport.h"
#include "parasol/core/clock.h"
#include "parasol/core/error.h"

namespace parasol::apps::lda {

namespace {

constexpr comm::Tag kBlockTag = 1;
constexpr comm::Tag kGatherTag = 2;
constexpr comm::Tag kRunCountsTag = 3;
constexpr comm::Tag kRunsTag = 4;
// Stretches shorter than this are copied a topic at a time (a call to memcpy or memmove costs more
// than the copy); longer ones in bulk.
constexpr size_t kBulk = 64;

// n topics from `from` to `to` (apart).
template <typename Z>
void CopyTopics(Z* to, const Z* from, size_t n) {
  if (n >= kBulk) {
    std::memcpy(to, from, sizeof(Z) * n);
    return;
  }
  for (size_t i = 0; i < n; ++i) to[i] = from[i];
}

// The topics of the block not in `skip` to `out`, in order: their count.
template <typename Z>
size_t Compact(const Z* topics, size_t size, std::span<const BlockRun> skip, Z* out) {
  size_t at = 0, from = 0;
  auto copy = [&](size_t end) {
    CopyTopics(out + at, topics + from, end - from);
    at += end - from;
  };
  for (const BlockRun& r : skip) {
    copy(r.at);
    from = r.at + r.len;
  }
  copy(size);
  return at;
}

// The inverse, in place: the block's topics not in `own` arrived at its start; those in `own` come
// from `store`. Backwards, so that no topic is written over before it is read: an arrived topic
// only moves up, past what is left to read.
template <typename Z>
void Expand(Z* topics, size_t size, std::span<const BlockRun> own, const Z* store) {
  size_t arrived = size, end = size, kept = 0;
  for (const BlockRun& r : own) arrived -= r.len, kept += r.len;
  auto move_up = [&](size_t to) {  // the arrived topics not yet placed to [to, end)
    const size_t n = end - to;
    arrived -= n;
    if (n >= kBulk) {
      std::memmove(topics + to, topics + arrived, sizeof(Z) * n);
    } else {
      for (size_t i = n; i-- > 0;) topics[to + i] = topics[arrived + i];
    }
    end = to;
  };
  for (auto r = own.rbegin(); r != own.rend(); ++r) {
    move_up(r->at + r->len);
    kept -= r->len, end = r->at;
    CopyTopics(topics + end, store + kept, r->len);
  }
  move_up(0);
}

// A neighbour's tokens of a block are left out of a hand-over to it when its runs are long
// enough: each run costs its sender and its receiver a few mispredicted branches, and runs of a
// few tokens (a Zipf vocabulary's rare words in a small corpus) cost more than sending them (20
// Newsgroups, two processes on one host: skipping every run took 5.6% of the run in the
// hand-overs, against 1.6% sending whole blocks; 200 M tokens over 1 Gbit/s: runs of 4,000 tokens).
constexpr uint64_t kSkippedRun = 32;  // tokens a run, on average
bool Skipped(std::span<const BlockRun> runs, uint64_t tokens) {
  return !runs.empty() && tokens >= kSkippedRun * runs.size();
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

// Runs one rank sent: `counts[b]` in block b, `flat` all of them, block by block. Checked to fit
// (a MismatchError naming `what` otherwise).
std::vector<std::vector<BlockRun>> SplitRuns(const std::vector<BlockRun>& flat,
                                             const std::vector<uint32_t>& counts,
                                             const std::vector<uint32_t>& sizes, const std::string& what) {
  std::vector<std::vector<BlockRun>> runs(counts.size());
  size_t at = 0;
  for (size_t b = 0; b < counts.size(); ++b) {
    runs[b].assign(flat.begin() + static_cast<ptrdiff_t>(at),
                   flat.begin() + static_cast<ptrdiff_t>(at + counts[b]));
    at += counts[b];
  }
  if (!Fit(runs, sizes))
    throw MismatchError(what + ": they do not fit the blocks (other sizes, or overlapping)");
  return runs;
}

// How many runs `counts` announces; more than the blocks' tokens (a run holds one at least) cannot
// fit, and are not allocated for.
uint64_t RunsAnnounced(const std::vector<uint32_t>& counts, const std::vector<uint32_t>& sizes,
                       const std::string& what) {
  uint64_t all = 0, room = 0;
  for (size_t b = 0; b < counts.size(); ++b) all += counts[b], room += sizes[b];
  if (all > room) throw MismatchError(fmt::format("{}: {} runs in {} tokens", what, all, room));
  return all;
}

uint64_t Tokens(const std::vector<BlockRun>& runs) {
  uint64_t n = 0;
  for (const BlockRun& r : runs) n += r.len;
  return n;
}

}  // namespace

template <typename Z>
BlockRing<Z>::BlockRing(comm::Context& ctx, std::vector<uint32_t> sizes, uint32_t topics,
                        std::chrono::milliseconds timeout_ms, std::vector<OwnTokens<Z>> own)
    : ctx_(ctx.Duplicate(Deadline::After(timeout_ms))),
      rank_(ctx.rank()),
      size_(ctx.size()),
      sizes_(std::move(sizes)),
      per_process_(static_cast<uint32_t>(sizes_.size()) / static_cast<uint32_t>(ctx.size())),
      timeout_ms_(timeout_ms),
      own_(own.empty() ? std::vector<OwnTokens<Z>>(sizes_.size()) : std::move(own)) {
  assert(own_.size() == sizes_.size());
  assert(topics - 1 <= std::numeric_limits<Z>::max());
  (void)topics;
  // Runs that do not fit are reported by the neighbour that learns them (LearnLeftRuns).
  for (const OwnTokens<Z>& o : own_) own_tokens_.push_back(static_cast<uint32_t>(Tokens(o.runs)));
  // Runs too short to be worth leaving out travel after all: dropped before the others learn them.
  for (size_t b = 0; b < sizes_.size(); ++b) {
    if (!Skipped(own_[b].runs, own_tokens_[b])) own_[b].runs.clear(), own_tokens_[b] = 0;
  }
  LearnRootRuns();
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
    OutgoingFor(most);
  }
  NotePeak();
}

template <typename Z>
BlockRing<Z>::~BlockRing() {
  comm::Transport& t = ctx_->transport();
  if (send_.valid()) t.Cancel(send_);
  if (recv_.valid()) t.Cancel(recv_);
}

// Two messages to the right neighbour: the number of runs in each block, then the runs.
template <typename Z>
void BlockRing<Z>::LearnLeftRuns(const std::vector<OwnTokens<Z>>& own) {
  const size_t blocks = sizes_.size();
  left_runs_.assign(blocks, {});
  left_tokens_.assign(blocks, 0);
  if (size_ == 1) return;
  comm::Transport& t = ctx_->transport();
  const Deadline deadline = Deadline::After(timeout_ms_);
  const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
  std::vector<uint32_t> counts, theirs(blocks);
  std::vector<BlockRun> runs;
  for (const OwnTokens<Z>& o : own) {
    counts.push_back(static_cast<uint32_t>(o.runs.size()));
    runs.insert(runs.end(), o.runs.begin(), o.runs.end());
  }
  comm::Request send = t.Isend(right, kRunCountsTag, counts.data(), counts.size() * sizeof(uint32_t));
  comm::Request recv = t.Irecv(left, kRunCountsTag, theirs.data(), theirs.size() * sizeof(uint32_t));
  const std::string what =
      fmt::format("rank {}: lda: learn rank {}'s tokens of the word blocks", rank_, left);
  comm::Wait(t, recv, deadline, what);
  std::vector<BlockRun> flat(RunsAnnounced(theirs, sizes_, what));
  comm::Request send_runs = t.Isend(right, kRunsTag, runs.data(), runs.size() * sizeof(BlockRun));
  comm::Request recv_runs = t.Irecv(left, kRunsTag, flat.data(), flat.size() * sizeof(BlockRun));
  comm::Wait(t, recv_runs, deadline, what);
  comm::Wait(t, send, deadline, what);
  comm::Wait(t, send_runs, deadline, what);
  left_runs_ = SplitRuns(flat, theirs, sizes_, what);
  for (size_t b = 0; b < blocks; ++b) left_tokens_[b] = static_cast<uint32_t>(Tokens(left_runs_[b]));
}

// Rank 0's runs, broadcast: what a gather at rank 0 leaves out.
template <typename Z>
void BlockRing<Z>::LearnRootRuns() {
  const size_t blocks = sizes_.size();
  root_runs_.assign(blocks, {});
  root_tokens_.assign(blocks, 0);
  if (size_ == 1) return;
  const std::string what = fmt::format("rank {}: lda: learn rank 0's tokens of the word blocks", rank_);
  std::vector<uint32_t> counts(blocks);
  std::vector<BlockRun> flat;
  for (size_t b = 0; rank_ == 0 && b < blocks; ++b) {
    counts[b] = static_cast<uint32_t>(own_[b].runs.size());
    flat.insert(flat.end(), own_[b].runs.begin(), own_[b].runs.end());
  }
  const collective::BroadcastOptions from_root{.timeout_ms = timeout_ms_};
  collective::Broadcast(*ctx_, counts.data(), blocks, DType::kInt32, from_root);
  flat.resize(RunsAnnounced(counts, sizes_, what));
  if (!flat.empty()) collective::Broadcast(*ctx_, flat.data(), 2 * flat.size(), DType::kInt32, from_root);
  root_runs_ = SplitRuns(flat, counts, sizes_, what);
  for (size_t b = 0; b < blocks; ++b) root_tokens_[b] = static_cast<uint32_t>(Tokens(root_runs_[b]));
}

template <typename Z>
Z* BlockRing<Z>::OutgoingFor(size_t topics) {
  if (outgoing_.size() < topics) outgoing_.resize(topics);
  return outgoing_.data();
}

template <typename Z>
void BlockRing<Z>::NotePeak() {
  size_t topics = 0;
  for (const Block& b : held_) topics += b.topics.size();
  if (pending_) topics += leaving_.topics.size() + incoming_.topics.size() + outgoing_.size();
  peak_bytes_ = std::max(peak_bytes_, topics * sizeof(Z));
}

template <typename Z>
void BlockRing<Z>::Rotate() {
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
  const Z* z = leaving_.topics.data();
  size_t kept = 0;
  for (const BlockRun& r : own_[b].runs) {
    CopyTopics(own_[b].store + kept, z + r.at, r.len);
    kept += r.len;
  }
  const int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
  Z* out = OutgoingFor(sizes_[b] - left_tokens_[b]);  // sized for this already: no allocation
  const size_t sent = Compact(z, leaving_.topics.size(), left_runs_[b], out);
  assert(sent == sizes_[b] - left_tokens_[b]);
  send_ = t.Isend(left, kBlockTag, out, sent * sizeof(Z));
  bytes_sent_ += sent * sizeof(Z);
  incoming_.id = next;
  incoming_.topics.resize(sizes_[next]);
  recv_ = t.Irecv(right, kBlockTag, incoming_.topics.data(), (sizes_[next] - own_tokens_[next]) * sizeof(Z));
  pending_ = true;
  NotePeak();
  if (held_.empty()) Complete();
}

template <typename Z>
void BlockRing<Z>::Poll() {
  if (!pending_) return;
  comm::Transport& t = ctx_->transport();
  if (send_.valid()) t.Test(send_);
  if (recv_.valid()) t.Test(recv_);
}

template <typename Z>
void BlockRing<Z>::Complete() {
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
  const OwnTokens<Z>& own = own_[incoming_.id];
  Expand<Z>(incoming_.topics.data(), incoming_.topics.size(), own.runs, own.store);
  held_.push_back(std::move(incoming_));
  // The leaving block's array is reused for the next arrival (blocks are about the same size).
  incoming_ = std::move(leaving_);
  leaving_ = Block{};
  pending_ = false;
}

template <typename Z>
void BlockRing<Z>::Settle() {
  if (pending_) Complete();
}

template <typename Z>
void BlockRing<Z>::ForEachHeld(const std::function<void(uint32_t, const Z*)>& fn) const {
  for (const Block& b : held_) fn(b.id, b.topics.data());
}

template <typename Z>
void BlockRing<Z>::ForEachReadable(const std::function<void(uint32_t, const Z*)>& fn) const {
  for (const Block& b : held_) fn(b.id, b.topics.data());
  if (pending_) fn(leaving_.id, leaving_.topics.data());
}

template <typename Z>
void BlockRing<Z>::FillHeld(const std::function<void(uint32_t, Z*)>& fn) {
  for (Block& b : held_) fn(b.id, b.topics.data());
}

// As the hand-overs: without rank 0's own tokens where their runs are long (a gather at the end of a
// run of 200 M tokens sent 400 MB from each other process at 4 bytes a topic, 3.2 s over 1 Gbit/s;
// 100 MB at 2 bytes without them). The senders' blocks are not touched.
template <typename Z>
void BlockRing<Z>::ForEachAtRoot(const std::function<void(uint32_t, const Z*)>& fn) {
  Settle();
  comm::Transport& t = ctx_->transport();
  const Deadline deadline = Deadline::After(timeout_ms_);
  if (rank_ != 0) {
    for (const Block& b : held_) {
      Z* out = OutgoingFor(b.topics.size() - root_tokens_[b.id]);
      const size_t n = Compact(b.topics.data(), b.topics.size(), root_runs_[b.id], out);
      comm::Request req = t.Isend(0, kGatherTag, out, n * sizeof(Z));
      comm::Wait(t, req, deadline, fmt::format("lda: send word block {} to rank 0", b.id));
    }
    return;
  }
  for (const Block& b : held_) fn(b.id, b.topics.data());
  // Every rank has rotated as often as this one: rank p holds the blocks p * per_process_ + r + i
  // (mod the blocks) after r rotations, i < per_process_, in that order, as rank 0 holds r + i.
  const uint32_t r = held_.front().id;
  std::vector<Z> topics;
  for (int p = 1; p < size_; ++p) {
    for (uint32_t i = 0; i < per_process_; ++i) {
      const uint32_t id = (static_cast<uint32_t>(p) * per_process_ + r + i) % blocks();
      topics.resize(sizes_[id]);
      comm::Request req = t.Irecv(p, kGatherTag, topics.data(), (sizes_[id] - own_tokens_[id]) * sizeof(Z));
      comm::Wait(t, req, deadline, fmt::format("lda: receive word block {} from rank {}", id, p));
      Expand<Z>(topics.data(), topics.size(), own_[id].runs, own_[id].store);
      fn(id, topics.data());
    }
  }
}

template class BlockRing<uint16_t>;
template class BlockRing<uint32_t>;

}  // namespace parasol::apps::lda
