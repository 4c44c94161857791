// The schedule IR: a collective algorithm is, for every rank, a Program of steps saying which part
// of which buffer moves to or from which peer and what is reduced where. The same Program runs on
// a transport (Executor) or on a simulated network (Simulate), so the algorithm code that is
// checked for correctness at 8 ranks is the code that is evaluated at 1,024.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace parasol::collective {

enum class BufferId : uint8_t {
  kData = 0,     // the buffer the collective works in (the output)
  kScratch = 1,  // executor-owned staging for incoming data to be reduced
  kInput = 2,    // the caller's input, read-only (alltoall sends from it)
};

// A range of elements of one buffer.
struct Region {
  BufferId buffer = BufferId::kData;
  uint64_t offset = 0;
  uint64_t count = 0;
};

enum class OpKind : uint8_t {
  kSend,        // send `region` to `peer`
  kRecv,        // receive from `peer` into `region`
  kRecvReduce,  // receive from `peer` into `aux` (scratch), then region = region (op) aux, or
                // with reduce_from_input, region = input[region] (op) aux
  kCopy,        // region = aux, locally
};

struct Op {
  OpKind kind = OpKind::kSend;
  uint8_t channel = 0;      // message stream between a pair; part of the tag
  uint16_t stream_pos = 0;  // position in its stream (peer, channel, direction); part of the tag
  bool reduce_from_input = false;
  int32_t peer = -1;
  Region region;
  Region aux;
  // deps[dep_begin, dep_apply): ops that must complete before this op starts.
  // deps[dep_apply, dep_end): (kRecvReduce) ops that must complete before the reduction applies.
  uint32_t dep_begin = 0;
  uint32_t dep_apply = 0;
  uint32_t dep_end = 0;
};

// One rank's part of a schedule. Built by ProgramBuilder; read-only afterwards.
struct Program {
  int rank = 0;
  int nranks = 1;
  std::vector<Op> ops;
  std::vector<uint32_t> deps;
  uint64_t scratch_count = 0;  // elements of scratch the program needs

  // Derived by ProgramBuilder::Finish:
  // queue_prev[i]: the previous op in the same stream (peer, channel, direction), or -1. Messages
  // of a stream are posted in program order, so the k-th send matches the peer's k-th receive.
  std::vector<int32_t> queue_prev;
  std::vector<int32_t> queue_next;
  // Ops that depend on op i: issue_succ[issue_succ_begin[i] .. issue_succ_begin[i+1]), likewise apply.
  std::vector<uint32_t> issue_succ_begin, issue_succ;
  std::vector<uint32_t> apply_succ_begin, apply_succ;

  size_t size() const { return ops.size(); }
  // Bytes this rank sends in total.
  uint64_t SentBytes(size_t elem_size) const;
  // One line per op, for debugging and tests.
  std::string Describe() const;
};

// Builds a Program. Dependencies are derived from the regions ops touch: an op that reads a
// region waits for the ops that wrote it; an op that writes waits for earlier readers and writers
// (a send's buffer is not overwritten while in flight); receive-reduces into one region apply in
// program order, so every rank computes bitwise the same sums in the same order.
// Scratch for receive-reduces comes from a few slots per (channel, peer), reused in turn.
//
// Out of place (`from_input`), the data buffer starts undefined and the starting values are the
// input's: an op that reads elements not yet written reads the input instead, the first
// reduction into an element reduces from the input, and whatever the program never writes is
// copied from the input at the end. No pass copies the whole input first.
class ProgramBuilder {
 public:
  ProgramBuilder(int rank, int nranks);
  // `data_count` elements of data start undefined (see above).
  ProgramBuilder(int rank, int nranks, bool from_input, uint64_t data_count);
  ~ProgramBuilder();
  ProgramBuilder(ProgramBuilder&&) noexcept;
  ProgramBuilder& operator=(ProgramBuilder&&) noexcept;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }

  // Each returns the op's index; ops with count 0 are not emitted (returns -1), and both ends of
  // a message skip it alike because they derive sizes from the same layout.
  int64_t Send(int peer, Region region, int channel = 0);
  int64_t Recv(int peer, Region region, int channel = 0);
  int64_t RecvReduce(int peer, Region region, int channel = 0);
  int64_t Copy(Region dst, Region src);

  Program Finish() &&;

  static constexpr int kScratchSlotsPerChannel = 8;
  static constexpr int kMaxChannels = 32;

 private:
  struct Tracker;
  int64_t Add(Op op, std::vector<uint32_t> issue_deps, std::vector<uint32_t> apply_deps);

  // from_input: copies the not-yet-written parts of `r` from the input; returns whether any of
  // `r` was written before (false: all of it is still the input's).
  bool DefineFromInput(Region r, bool* none_written);

  int rank_;
  int nranks_;
  bool from_input_ = false;
  uint64_t data_count_ = 0;
  Program program_;
  std::vector<std::vector<uint32_t>> issue_deps_;
  std::vector<std::vector<uint32_t>> apply_deps_;
  std::unique_ptr<Tracker> tracker_;
};

// Splits `count` elements into `parts` contiguous blocks whose sizes differ by at most one (the
// first count % parts blocks are larger). Returns parts + 1 offsets.
std::vector<uint64_t> BalancedOffsets(uint64_t count, int parts);
// Splits `count` into blocks proportional to `weights` (non-negative, not all zero).
std::vector<uint64_t> WeightedOffsets(uint64_t count, const std::vector<double>& weights);

}  // namespace parasol::collective
