// The gradients of a data-parallel job, summed over ranks through the parameter server under a
// staleness bound S (Dorylus's bounded-staleness weight updates): each epoch a rank writes its
// gradient into rows of its own and clocks; the parameter server's SSP(S) then hands back, one
// clock later, every rank's rows of the push S epochs before (never older: the bound; never
// newer: the rows form a ring of 2S + 2 pushes, and a rank cannot run far enough ahead to write a
// slot again before the slowest has read it). Each rank sums the ranks' rows in rank order and
// applies the same optimizer step to its replica of the weights, so the replicas stay equal: what
// one table summed on the servers would not give (its sums would take the ranks' updates in
// whatever order they arrived).
//
// The table holds float64: a row then holds exactly the float gradient last pushed, whatever it
// held before (a push adds the difference to the last one). A push may carry a few doubles more
// (the epoch's figures), summed alike.
//
// Threading: one caller thread per rank, every rank pushing the same sizes in order. The parameter
// server runs a communication thread of its own. Errors (TimeoutError, PeerGoneError, AbortedError
// naming the rank) come from Push.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::apps::gnn {

class GradientTable {
 public:
  // Collective: starts the parameter server and creates the table for gradients of `size` floats
  // and `extra` doubles.
  GradientTable(comm::Context& ctx, size_t size, size_t extra, uint32_t staleness,
                std::chrono::milliseconds timeout_ms);
  // Without Finish (an error is unwinding) the parameter server aborts: the others' waits fail.
  ~GradientTable() = default;
  GradientTable(const GradientTable&) = delete;
  GradientTable& operator=(const GradientTable&) = delete;

  // Writes this epoch's gradient (and extra values) and clocks; returns in `sum` (`extra_sum`) the
  // sums over ranks of the push S pushes ago, or false while fewer than S + 1 pushes were made.
  bool Push(std::span<const float> grad, std::span<const double> extra, std::vector<float>* sum,
            std::vector<double>* extra_sum);
  // Collective, after the last Push: stops the parameter server.
  void Finish();

  // Pushes so far (the worker's clock).
  uint64_t pushes() const { return worker_->clock(); }
  // Bytes this rank's parameter server sent to other ranks.
  uint64_t bytes_sent() const { return ps_->stats().bytes_out; }

 private:
  uint64_t RowOf(uint64_t slot, int rank, size_t chunk) const;
  // Every rank's rows of a slot (in rows_).
  std::span<const uint64_t> SlotRows(uint64_t slot);

  const size_t size_, extra_, chunks_;  // chunks of size_ + extra_ values
  const int rank_, ranks_;
  const uint32_t staleness_;
  const uint64_t slots_;
  std::unique_ptr<ps::ParameterServer> ps_;
  std::unique_ptr<ps::Worker> worker_;
  std::vector<std::vector<double>> pushed_;  // this rank's last push into each slot
  std::vector<double> values_, delta_, row_, total_;
  std::vector<uint64_t> rows_;
  bool finished_ = false;
};

}  // namespace parasol::apps::gnn
