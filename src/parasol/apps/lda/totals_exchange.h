// Several processes: the topic totals n_k kept in step without a barrier at every word-block step.
// Each process sends its own changes to every other process after a step and adds theirs one
// step later, when they have long arrived: a process samples with the others' changes up to the
// step before last (its own are always current), as LightLDA's workers do with theirs. Summing
// after every step instead (an allreduce) made the faster process wait for the slower at every
// step, though both have the same work over an iteration: 0.4-0.5 s an iteration on two
// processes of 200 M tokens, 5%.
//
// Errors: a process that does not send its changes by the deadline is an error naming this rank,
// the operation and the peer; one that dies, an AbortedError.
//
// Threading: one thread calls everything (the trainer's).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "parasol/comm/context.h"

namespace parasol::apps::lda {

class TotalsExchange {
 public:
  // Collective. `topics`: the length of every change, the same on every process.
  TotalsExchange(comm::Context& ctx, size_t topics, std::chrono::milliseconds timeout_ms);
  // Abandons changes in flight (the job is ending).
  ~TotalsExchange();
  TotalsExchange(const TotalsExchange&) = delete;
  TotalsExchange& operator=(const TotalsExchange&) = delete;

  // Sends `changes` (this process's since its last Post) to every other process.
  // REQUIRES: changes.size() == topics; nothing in flight (Collect called since the last Post).
  void Post(std::span<const int64_t> changes);
  // Waits for every other process's changes of its matching Post and adds them to `totals`;
  // nothing when nothing is in flight.
  void Collect(std::span<int64_t> totals);
  // Moves the transfers on without blocking.
  void Poll();
  // Time spent blocked in Collect, on the context's Env clock.
  double wait_seconds() const { return wait_seconds_; }

 private:
  std::unique_ptr<comm::Context> ctx_;  // its own message space
  const size_t topics_;
  std::chrono::milliseconds timeout_ms_;
  bool pending_ = false;
  std::vector<int64_t> sent_;                   // kept until every send has completed
  std::vector<std::vector<int64_t>> received_;  // one per process (this one's unused)
  std::vector<comm::Request> sends_, recvs_;
  double wait_seconds_ = 0;
};

}  // namespace parasol::apps::lda
