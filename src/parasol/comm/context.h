// The explicit runtime state of one rank in one job: who it is, how it talks, how long a blocking
// call may wait by default. Passed to everything that communicates; there are no singletons, so
// a test can run many ranks, each with its own Context, in one process.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "parasol/comm/transport.h"
#include "parasol/core/deadline.h"
#include "parasol/core/env.h"

namespace parasol::comm {

struct ContextOptions {
  // Deadline for blocking calls that are not given one.
  std::chrono::milliseconds timeout_ms{60000};
  // What this rank reaches the machine through: the files its checkpoints and models are written
  // through, the clock its polls and injected delays run on. A test puts a FaultyFileSystem here
  // to fail any writer's disk, or a ManualClock to drive time. What it names must outlive the
  // context and every context made from it.
  Env env;
};

// Threading: collective calls on one Context must come from one thread at a time (they share a
// sequence counter); use Duplicate() for a concurrent stream of collectives.
class Context {
 public:
  explicit Context(std::unique_ptr<Transport> transport, ContextOptions options = {});

  int rank() const { return transport_->rank(); }
  int size() const { return transport_->size(); }
  Transport& transport() { return *transport_; }
  const ContextOptions& options() const { return options_; }
  // The deadline of the blocking calls that are not given one, from now on. Not while another
  // thread uses this context.
  void set_timeout(std::chrono::milliseconds timeout) { options_.timeout_ms = timeout; }
  Deadline DefaultDeadline() const { return Deadline::After(options_.timeout_ms); }
  // The Env of ContextOptions; contexts made from this one (Duplicate, Split) share it.
  Env& env() { return options_.env; }

  // Position of the next collective call on this context; all ranks call collectives in the
  // same order, so equal numbers identify the same call.
  uint64_t NextSequence() { return sequence_++; }

  // Per-context state for upper layers (e.g. cached schedules), created on first use. A vector
  // slot per type rather than a hash of the type: collectives call this on every operation.
  template <typename T>
  T& State() {
    size_t id = StateSlot<T>();
    if (state_.size() <= id) state_.resize(id + 1);
    auto& slot = state_[id];
    if (!slot) slot = std::make_shared<T>();
    return *static_cast<T*>(slot.get());
  }

  // A context over the same ranks with its own message space and sequence. Collective.
  std::unique_ptr<Context> Duplicate(Deadline deadline);
  // A context over the ranks that pass the same color (>= 0), in this context's rank order: a
  // tensor-parallel group, the data-parallel replicas of one shard. Collective over every rank.
  std::unique_ptr<Context> Split(int color, Deadline deadline);

 private:
  std::unique_ptr<Transport> transport_;
  ContextOptions options_;
  uint64_t sequence_ = 0;
  // A small index per state type, the same for every Context.
  static size_t NextStateSlot();
  template <typename T>
  static size_t StateSlot() {
    static const size_t slot = NextStateSlot();
    return slot;
  }

  std::vector<std::shared_ptr<void>> state_;
};

}  // namespace parasol::comm
