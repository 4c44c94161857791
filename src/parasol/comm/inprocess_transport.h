// Ranks as threads of one process: the transport the unit tests run on. It keeps MPI's matching
// rules (per sender and tag, in order) and can delay or drop chosen messages and stop ranks, so
// tests can exercise every fault a real cluster shows.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "parasol/comm/transport.h"
#include "parasol/core/env.h"

namespace parasol::comm {

inline constexpr int kAnyRank = -1;

// Delays or drops the messages it matches, or stops their sender as it sends one (kKillSender:
// the rank dies at a point of its run the test chooses by counting messages, not by the clock).
struct MessageFault {
  enum class Action { kDelay, kDrop, kKillSender };
  Action action = Action::kDelay;
  int src = kAnyRank;
  int dst = kAnyRank;
  // Matches tags with (tag & tag_mask) == tag_value; the default matches all.
  Tag tag_mask = 0;
  Tag tag_value = 0;
  int skip = 0;    // let this many matching messages through first
  int count = -1;  // then act on this many (-1: on all that follow)
  std::chrono::milliseconds delay_ms{0};
};

struct InProcessOptions {
  // false (rendezvous): a send completes only once the receiver has taken the data, as MPI does
  // for large messages, so a schedule that relies on buffering or overwrites a buffer that is
  // still being sent fails here too. true (eager): data is copied at send time.
  bool eager = false;
  // Its clock is the one MessageFault's delays run on (by default the machine's). A test drives a
  // ManualClock to make a delayed message visible at the step it chooses. What it names must
  // outlive the world's transports.
  Env env;
};

class InProcessWorld {
 public:
  explicit InProcessWorld(int size, InProcessOptions options = {});
  ~InProcessWorld();
  InProcessWorld(const InProcessWorld&) = delete;
  InProcessWorld& operator=(const InProcessWorld&) = delete;

  int size() const;
  // The transport of `rank`. Transports keep the world's state alive on their own.
  std::unique_ptr<Transport> CreateTransport(int rank);

  void AddFault(const MessageFault& fault);
  // From now on `rank` is gone: messages to it vanish, receives from it fail with PeerGoneError
  // once nothing it sent earlier is left, and its own calls fail.
  void KillRank(int rank);
  // Messages handed to the world so far (dropped ones included).
  uint64_t messages_sent() const;
  // Calls now blocked in WaitForEvent: how a test knows that ranks wait for a message (in a
  // barrier, for a late rank) before it lets that message come, instead of sleeping and hoping.
  int waiting() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace parasol::comm
