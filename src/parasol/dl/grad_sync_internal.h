// GradSync's private parts, shared by its two source files (planning and running).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "parasol/dl/grad_sync.h"
#include "parasol/ps/parameter_server.h"

namespace parasol::dl {

// The owning pointer grad_accumulator hands out: a shared_ptr in earlier PyTorch 2 releases (2.11
// among them), an intrusive_ptr in 2.14.
using AccumulatorPtr = decltype(torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));

struct GradSync::Unit {
  int64_t begin = 0, end = 0;          // range of the flat buffers
  int first_param = 0, end_param = 0;  // parameters that overlap it
  int stage = 0;                       // its (lowest) stage: P3's priority
  bool sfb = false;                    // sufficient factors of one fully-connected layer
  int weight = -1, bias = -1;          // sfb: the layer's parameters
  int64_t rows = 0, cols = 0;          // sfb: M x N
  int pending = 0;                     // per step, training thread only: gradients still to come
  torch::Tensor g, x;                  // sfb: this rank's factors, set before launch
  int64_t numel() const { return end - begin; }
};

struct GradSync::Impl {
  // Parameter-server backend: one dense float table over the flat gradient, holding the sum of
  // every rank's latest averaged gradient. A rank pushes the change of its own contribution,
  // g_t / P - g_{t-1} / P, so the table's rows stay gradient-sized (no running sum to lose
  // precision in float) and a read is the aggregated gradient itself: under BSP each rank's step-t
  // contribution, under SSP each rank's latest the bound lets through.
  // Under BSP the steps alternate between two such tables: a shard answers a row once every
  // rank's push of it is in, and the row it sends holds whatever has arrived by then, so with one
  // table a rank already pushing step t+1 (it read every row of step t) would leak its step-t+1
  // gradient into a slower rank's read of step t, and the replicas drift apart. A rank cannot
  // push step t+2 before every rank has pushed step t+1, which each does after reading step t.
  std::unique_ptr<ps::ParameterServer> ps;
  std::unique_ptr<ps::Worker> worker;  // the communication thread's
  int num_tables = 1;                  // 2 under BSP
  std::vector<float> pushed[2];        // this rank's last contribution to each table, per element
  std::vector<int64_t> row_left;       // per table row: elements still to come this step
  std::vector<float> row;              // scratch row
  std::vector<uint64_t> unflushed;     // rows pushed since the last Flush
  uint64_t traffic = 0;                // this rank's exchange bytes at the last step's end
  // P3: the frontier (lowest stage from which every stage is ready) agreed by all ranks
  // (communication thread only; this rank's own is the board's).
  int agreed_frontier = 0;
  std::vector<float> scratch;  // slice + readiness vector; sharded all-gather
  // Gradient norms of the step under way (communication thread), handed over with its last unit.
  double local_sqr = 0, total_sqr = 0, shard_sqr = 0;
  GradientNorms finished;
  std::vector<AccumulatorPtr> accumulators;  // kept alive for their hooks
  std::vector<uintptr_t> hook_keys;
};

constexpr uint32_t kPsTable = 1;  // and kPsTable + 1 under BSP
// The table of the step a worker at `clock` is pushing (or, after its Clock, reading: clock - 1).
inline uint32_t PsTableOf(const GradSync::Impl& impl, uint64_t step) {
  return kPsTable + static_cast<uint32_t>(step % static_cast<uint64_t>(impl.num_tables));
}
constexpr int64_t kPsRowWidth = 4096;

}  // namespace parasol::dl
