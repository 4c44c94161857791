// Runs one rank's Program over a Transport.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parasol/collective/program_state.h"
#include "parasol/collective/schedule.h"
#include "parasol/comm/transport.h"
#include "parasol/core/deadline.h"
#include "parasol/core/reduce_op.h"

namespace parasol::collective {

// Message tags of collectives: [sequence:5][channel:5][index:6][signature:14]. Equal sequence
// numbers mean the same collective call on both ranks; the signature hashes the call's arguments,
// so a message with another signature for the same call proves the ranks disagree. The index is
// the message's position in its stream (mod 64): a message that is lost leaves its receive
// unmatched (a timeout) instead of letting the next message take its place (a wrong result).
inline constexpr uint32_t kSignatureBits = 14;
comm::Tag MakeTag(uint64_t sequence, uint32_t channel, uint32_t index, uint64_t signature);
uint32_t TagSequence(comm::Tag tag);
uint32_t TagSignature(comm::Tag tag);

struct ExecuteArgs {
  const Program* program = nullptr;
  void* data = nullptr;         // BufferId::kData
  const void* input = nullptr;  // BufferId::kInput
  size_t elem_size = 0;
  ReduceFn reduce = nullptr;
  ReduceFn3 reduce3 = nullptr;  // for receive-reduces from the input
  uint64_t sequence = 0;
  uint64_t signature = 0;
  Deadline deadline = Deadline::Never();
  std::chrono::milliseconds timeout_ms{0};  // for messages only
  std::string_view what;                    // e.g. "allreduce(ring, 1000 x float32, sum)"; outlives Run
};

// Reusable between calls (keeps scratch and bookkeeping). Not thread-safe.
class Executor {
 public:
  // Runs args.program for this rank. On failure every in-flight request is cancelled, the other
  // ranks are told (they fail at once with AbortedError instead of waiting out their deadline),
  // and a typed error names this rank, args.what and the peer: TimeoutError, PeerGoneError,
  // MismatchError (a peer called another collective or with other arguments), AbortedError.
  void Run(comm::Transport& t, const ExecuteArgs& args);

 private:
  void Loop(comm::Transport& t, const ExecuteArgs& a);
  void Issue(comm::Transport& t, const ExecuteArgs& a, uint32_t op);
  void Idle(comm::Transport& t, const ExecuteArgs& a, uint64_t epoch);
  std::byte* Ptr(const ExecuteArgs& a, const Region& r);
  [[noreturn]] void ThrowTimeout(comm::Transport& t, const ExecuteArgs& a);
  void ProbeMismatch(comm::Transport& t, const ExecuteArgs& a);

  ProgramState state_;
  std::vector<std::byte> scratch_;
  std::vector<uint32_t> inflight_ops_;  // parallel to inflight_reqs_
  std::vector<comm::Request> inflight_reqs_;
  std::vector<size_t> done_;
  unsigned idle_ = 0;
  Deadline::Clock::time_point last_probe_;
};

}  // namespace parasol::collective
