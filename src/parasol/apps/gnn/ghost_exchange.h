// How a rank's ghost rows are filled from their owners. With staleness 0 each refresh is an
// alltoallv: every rank waits for the rows its peers compute in the same pass. With a staleness
// bound S >= 1 (Dorylus's bounded asynchrony) a refresh sends this epoch's rows and fills the
// ghosts with the rows the owners computed exactly S epochs earlier, which a communication thread
// has been moving while this rank computed: a rank then never waits for its peers' work of the
// same epoch, and the transfers overlap the computation. Rows S epochs old, not "whatever has
// arrived", so that runs repeat bit for bit.
//
// A model's refreshes and reductions happen in the same order every epoch (layer by layer,
// forward then backward); the i-th of an epoch is channel i, and it finds the rows of the i-th
// of the epoch S before.
//
// Threading: one thread per rank calls everything; every rank makes the same calls in the same
// order. With S >= 1 a communication thread of the exchange's own drives the messages in flight
// (polling every millisecond: MPI moves data only inside its calls). Errors: TimeoutError (the wait
// for a refresh's rows passes the context's deadline), PeerGoneError or AbortedError, naming the
// peer and the exchange.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <span>
#include <stop_token>
#include <vector>

#include "parasol/apps/gnn/ghost_window.h"
#include "parasol/apps/gnn/graph_shard.h"
#include "parasol/comm/context.h"
#include "parasol/core/mutex.h"
#include "parasol/core/service_thread.h"

namespace parasol::apps::gnn {

// How refreshes move ghost rows with staleness 0: the owners send them (an alltoallv), or the
// holders read them from the owners' registered memory (GhostWindow).
enum class GhostTransfer { kTwoSided, kOneSided };

class GhostExchange {
 public:
  // staleness > 0 duplicates `ctx` (collective): the stale rows travel in their own message space.
  // kOneSided needs staleness 0 (InvalidArgumentError otherwise): a communication thread moving
  // stale rows has its own messages in flight.
  GhostExchange(comm::Context& ctx, uint32_t staleness, GhostTransfer transfer = GhostTransfer::kTwoSided);
  // Stops the communication thread and abandons exchanges still in flight (an error ended
  // training): their receives are cancelled.
  ~GhostExchange();
  GhostExchange(const GhostExchange&) = delete;
  GhostExchange& operator=(const GhostExchange&) = delete;

  uint32_t staleness() const { return staleness_; }
  // Starts epoch `epoch` (greater than the last): the refreshes that follow are its channels.
  void BeginEpoch(uint64_t epoch);
  // Fills rows [owned, owned + ghosts) of `m` (local_rows x width): the owners' rows of this
  // epoch (staleness 0), or of epoch max(e0, epoch - S), e0 being the first epoch begun.
  void Refresh(const GraphShard& s, size_t width, std::span<float> m);
  // The owners' rows of this epoch whatever the bound (a pass that must not mix epochs).
  void RefreshNow(const GraphShard& s, size_t width, std::span<float> m);
  // Adds the ghost rows of `m` into their owners' rows (ReduceGhosts): at once (staleness 0), or
  // what the other ranks' ghost rows held S epochs before (nothing in the first S epochs), so an
  // owner never waits for the others' part of this epoch. Ghost rows are left as they were.
  void Reduce(const GraphShard& s, size_t width, std::span<float> m);
  // Waits for every exchange in flight (one-sided: frees the window). Every rank calls it at the
  // same point (training's end).
  void Drain();

  // Bytes of rows this rank has sent to others.
  uint64_t bytes_sent() const { return bytes_sent_; }
  // The epoch in which the owners computed the rows the last Refresh wrote (0 before any).
  uint64_t last_rows_epoch() const { return last_rows_epoch_; }

 private:
  // One refresh's messages in flight, and what they carry. The communication thread drives the
  // requests once the slot is queued; `done` and `error` are then written under mu_.
  struct Slot {
    uint64_t epoch = 0;
    std::vector<float> send, recv;
    std::vector<comm::Request> requests;
    bool done = false;
    std::exception_ptr error;
    int waiting_for = -1;  // a peer whose message has not completed (for the timeout's message)
  };
  // The i-th refresh of every epoch.
  struct Channel {
    size_t width = 0;
    std::deque<Slot> in_flight;  // oldest first
    std::vector<float> rows;     // the newest ghost rows received, of epoch rows_epoch
    uint64_t rows_epoch = 0;
  };

  void Post(const GraphShard& s, size_t width, comm::Tag tag, std::span<const float> m, bool reduce,
            Slot* slot);
  // This epoch's next channel (made in the first epoch), with m's rows posted on it.
  Channel& PostNext(const GraphShard& s, size_t width, std::span<const float> m, bool reduce);
  // Blocks until the communication thread has completed `slot`; rethrows its error.
  void Complete(Slot* slot);
  // The communication thread: drives queued slots in order.
  void Progress(std::stop_token stop);
  // Tests `slot`'s requests until all completed or a stop; throws the transport's errors.
  void Drive(Slot* slot, const std::stop_token& stop);

  // A staleness-0 refresh: two-sided, or through the window (made at the first).
  uint64_t RefreshAtOnce(const GraphShard& s, size_t width, std::span<float> m);

  comm::Context& ctx_;
  const uint32_t staleness_;
  const GhostTransfer transfer_;
  std::unique_ptr<GhostWindow> window_;
  uint64_t epoch_ = 0;
  size_t next_channel_ = 0;
  uint64_t bytes_sent_ = 0, last_rows_epoch_ = 0;
  std::vector<float> scratch_;
  // Slots live here (a deque: they never move; queue_ points at them). Declared before async_ so
  // that the transport is gone before the buffers a cancelled send may still read.
  std::deque<Channel> channels_;
  std::unique_ptr<comm::Context> async_;

  Mutex mu_;
  CondVar cv_;  // a slot queued or done, or stop
  std::deque<Slot*> queue_ PARASOL_GUARDED_BY(mu_);
  ServiceThread thread_;
};

}  // namespace parasol::apps::gnn
