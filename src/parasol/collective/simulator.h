// A network simulator that runs every rank's Program over a Topology with the alpha-beta model:
// alone on its route, a message of S bytes over h links of bandwidth B takes S/B + h*alpha
// (cut-through). Links are full duplex. Each (source, destination, channel) stream is a flow
// whose messages go out in order; flows that share a link share its bandwidth equally, as
// NCCL's channels or a torus's virtual channels do. Optionally the simulation carries real data,
// so a schedule's correctness can be checked at scales no test machine runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "parasol/collective/schedule.h"
#include "parasol/collective/topology.h"
#include "parasol/core/reduce_op.h"

namespace parasol::collective {

struct SimulationOptions {
  size_t elem_size = 4;
  // Called as each op completes (rank, op index, time in seconds), for profiles and tests.
  std::function<void(int, uint32_t, double)> on_complete;
  // Rate at which a rank reduces received data, bytes/s; 0 treats reductions as free.
  double reduce_bytes_per_s = 0;
};

// Real buffers for a simulation that carries data: data[r] (and input[r], if the programs read
// BufferId::kInput) belong to rank r.
struct SimulationData {
  std::vector<std::vector<std::byte>>* data = nullptr;
  const std::vector<std::vector<std::byte>>* input = nullptr;
  ReduceFn reduce = nullptr;
  ReduceFn3 reduce3 = nullptr;  // programs built out of place reduce from the input
};

struct SimulationResult {
  double time_s = 0;  // when the last rank finished
  uint64_t messages = 0;
  uint64_t bytes_sent = 0;     // payload bytes, each message counted once
  double max_link_busy_s = 0;  // the busiest link's bytes over its bandwidth
  // When the last op of each channel finished (index = channel): a profile of the schedule's phases.
  std::vector<double> channel_done_s;
  std::vector<double> rank_done_s;  // when each rank finished its program
};

// REQUIRES: programs.size() == topology.num_ranks(), programs[r].rank == r. Throws
// InternalError if the schedule deadlocks (some rank can never finish).
SimulationResult Simulate(const Topology& topology, const std::vector<Program>& programs,
                          const SimulationOptions& options, const SimulationData* data = nullptr);

// The bandwidth lower bound for an allreduce of `bytes`: every rank must send at least
// 2(n-1)/n * bytes, so time >= that over the rank's outgoing bandwidth (the tightest rank); the
// ranks behind one uplink must receive at least `bytes` through it; plus the diameter's latency.
double AllreduceBoundSeconds(const Topology& topology, uint64_t bytes);

}  // namespace parasol::collective
