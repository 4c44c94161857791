// Sums each epoch's gradient over the ranks in the background and hands the sum back `staleness`
// epochs later (0: at once, on the caller's thread). Training then goes on with weights that lack
// at most the last S epochs' gradients while the sums travel (Dorylus's bounded-staleness weight
// updates). Every rank gets the same sums in the same epochs, so replicas stay equal: what a
// parameter server under SSP would not give (its reads return whatever newer updates arrived).
//
// Threading: one caller thread per rank; with S >= 1 a thread of its own runs the all-reduces
// on a duplicate of the context. Errors (TimeoutError, PeerGoneError naming the peer) reach the
// caller from the Push that waits for the sum.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/core/thread_pool.h"

namespace parasol::apps::gnn {

class DelayedAllreduce {
 public:
  // Collective when staleness > 0 (duplicates ctx).
  DelayedAllreduce(comm::Context& ctx, uint32_t staleness);
  // Waits for the sums in flight (their errors are dropped: training has ended).
  ~DelayedAllreduce();
  DelayedAllreduce(const DelayedAllreduce&) = delete;
  DelayedAllreduce& operator=(const DelayedAllreduce&) = delete;

  // Starts summing `grad`, this epoch's gradient; returns the sum started S pushes ago in `sum`,
  // or false while fewer than S + 1 pushes were made. Every rank pushes the same sizes in order.
  bool Push(std::span<const float> grad, std::vector<float>* sum);

 private:
  struct InFlight {
    std::vector<float> values;  // summed in place
    std::future<void> done;
  };
  comm::Context& ctx_;
  const uint32_t staleness_;
  std::vector<InFlight> ring_;  // S + 1 entries, by push count
  uint64_t pushes_ = 0;
  std::unique_ptr<comm::Context> background_;
  std::unique_ptr<ThreadPool> thread_;  // destroyed first: no task outlives the context
};

}  // namespace parasol::apps::gnn
