// Model-parallel LDA across processes: the vocabulary is cut into B = m x P word blocks that
// travel around the P processes. A block is the word-ordered topics of every process's tokens of
// its words (the counts n_wk follow from them, as in one process). Process p holds m blocks at a
// time; at step s of a rotation it samples block (p m + s) mod B, which no other process holds,
// then hands it to process p - 1 and receives block (p m + s + m) mod B from process p + 1. After
// B steps every block has visited every process once and each process holds its first blocks
// again. A block's topics are therefore exact while a process samples with it, and a process
// never holds more than its m blocks plus the one arriving: the model (V x K counts, or the
// corpus's topics) may be larger than one process's memory.
//
// A block travels without the receiver's own tokens: those changed only while the receiver last
// held the block, and it kept them (in its own word-ordered copy of its tokens, which the trainer
// has anyway) when the block left it. So the link carries every other process's tokens of the
// block and no more: half the block at two processes (two hosts, 200 M tokens at K = 10,000:
// 200 MB an iteration out of each process rather than 400). Not where the receiver's runs (a
// word's tokens at it) are short: they travel, as copying around them costs more (block_ring.cc).
// A block holds its topics as Z, uint16_t when there are at most 65,536 topics (uint32_t above),
// and they travel so: the sender copies what the receiver lacks into a buffer of its own, and the
// receiver spreads it in place, merging its kept tokens back, so no buffer is made beside the
// arriving block and the leaving one stays readable while it travels. Transfers are asynchronous: with m >= 2
// the block received is needed only m - 1 steps later, so the copy overlaps sampling as long as Poll() is
// called now and then while sampling runs.
//
// Errors: a neighbour that dies or does not hand over its block by the deadline is an error
// naming this rank, the operation and the peer; a block of another size a MismatchError.
//
// Threading: one thread calls everything (the trainer's).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/core/huge_page_allocator.h"

namespace parasol::apps::lda {

// Tokens [at, at + len) of a block.
struct BlockRun {
  uint32_t at, len;
};

// This process's tokens of one block: `runs`, in increasing order, not overlapping; while the
// block is away their topics are kept in store[0, their total length), in run order.
template <typename Z>
struct OwnTokens {
  Z* store = nullptr;
  std::vector<BlockRun> runs;
};

// Z: uint16_t or uint32_t (block_ring.cc makes both).
template <typename Z>
class BlockRing {
 public:
  // Collective. `sizes[b]`: block b's length, the same on every process. `own[b]`: this
  // process's tokens of block b (none when `own` is empty); each process learns its left
  // neighbour's, and a neighbour's that do not fit the blocks are a MismatchError. Every store
  // must outlive the ring's last Rotate, Settle or (rank 0's) ForEachAtRoot. REQUIRES: sizes.size() is a
  // multiple of ctx.size(); every topic a block holds is below `topics`, which Z holds; `own` empty or
  // one entry a block.
  // Process p starts holding blocks p m ... p m + m - 1, zeroed.
  BlockRing(comm::Context& ctx, std::vector<uint32_t> sizes, uint32_t topics,
            std::chrono::milliseconds timeout_ms, std::vector<OwnTokens<Z>> own = {});
  // Abandons transfers in flight (the job is ending).
  ~BlockRing();
  BlockRing(const BlockRing&) = delete;
  BlockRing& operator=(const BlockRing&) = delete;

  uint32_t blocks() const { return static_cast<uint32_t>(sizes_.size()); }
  uint32_t active_id() const { return held_.front().id; }
  Z* active() { return held_.front().topics.data(); }

  // The active block leaves for process p - 1; the next held block becomes active. Blocks until
  // that one is here (with m = 1, or when the transfer before has not finished).
  void Rotate();
  // Moves transfers on without blocking.
  void Poll();
  // Waits for the transfers in flight; then all m blocks are held.
  void Settle();
  // fn(id, topics) for the blocks held. REQUIRES: settled.
  void ForEachHeld(const std::function<void(uint32_t, const Z*)>& fn) const;
  // fn(id, topics) for the blocks held and the one leaving while its hand-over is in flight (it
  // is not written any more): every block of the ring at exactly one process, whole, without
  // waiting for a transfer. What arrives is its sender's to read.
  void ForEachReadable(const std::function<void(uint32_t, const Z*)>& fn) const;
  // fn(id, topics) for the blocks held, for fn to set their topics. REQUIRES: settled.
  void FillHeld(const std::function<void(uint32_t, Z*)>& fn);
  // Collective, settled: rank 0 gets fn(id, topics) for every block of the ring, wherever the
  // blocks are in their round; the others send theirs to it (as hand-overs travel:
  // without rank 0's own tokens, which it puts back from its stores).
  void ForEachAtRoot(const std::function<void(uint32_t, const Z*)>& fn);
  // The most bytes of blocks this process held at once (its own, those in flight and the copy
  // being sent).
  size_t peak_bytes() const { return peak_bytes_; }
  // The bytes of the blocks this process has handed on, and the time it spent blocked in Rotate
  // and Settle waiting for a transfer (read on the context's Env clock): what the link cost the
  // sampling, beyond what the transfers' overlap with it hid.
  uint64_t bytes_sent() const { return bytes_sent_; }
  double wait_seconds() const { return wait_seconds_; }

 private:
  // On huge pages: the document pass reads a block's topics at random positions (a word's
  // tokens), and with 4 KB pages each of those reads also missed the TLB.
  struct Block {
    uint32_t id = 0;
    HugePageVector<Z> topics;
  };
  // Sends this process's runs to the right neighbour, learns the left one's (collective).
  void LearnLeftRuns(const std::vector<OwnTokens<Z>>& own);
  // Learns rank 0's runs, as judged worth leaving out (collective).
  void LearnRootRuns();
  void Complete();
  void NotePeak();
  // The send buffer, grown to hold `topics` topics.
  Z* OutgoingFor(size_t topics);

  std::unique_ptr<comm::Context> ctx_;  // its own message space
  const int rank_, size_;
  const std::vector<uint32_t> sizes_;
  const uint32_t per_process_;
  std::chrono::milliseconds timeout_ms_;
  std::vector<OwnTokens<Z>> own_;                 // one a block (no runs: none of its tokens)
  std::vector<std::vector<BlockRun>> left_runs_;  // the left neighbour's tokens of each block
  std::vector<std::vector<BlockRun>> root_runs_;  // rank 0's, left out of a gather to it
  std::vector<uint32_t> own_tokens_, left_tokens_, root_tokens_;
  std::deque<Block> held_;
  // The transfer in flight: the block that left and the one arriving.
  bool pending_ = false;
  Block leaving_, incoming_;
  HugePageVector<Z> outgoing_;  // what the left neighbour lacks of the leaving block
  comm::Request send_, recv_;
  size_t peak_bytes_ = 0;
  uint64_t bytes_sent_ = 0;
  double wait_seconds_ = 0;
};

}  // namespace parasol::apps::lda
