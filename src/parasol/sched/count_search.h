// Choosing every job's GPU count to maximise the sum of per-job values under the cluster's
// capacity: each job offers a few counts (0 first) with a value at each, and takes exactly one.
//
// GreedyCounts: marginal value per GPU along each job's concave envelope, best first; optimal
// when values are concave in the count, O(points log jobs). ExactCounts: the multiple-choice
// knapsack by dynamic programming over GPUs, optimal for any values (a running job's current
// count is worth more than its neighbours, since changing costs a restart, so values are not
// concave), O(jobs x GPUs x points): about 1 ms for 200 jobs on 64 GPUs.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace parasol::sched {

struct CountChoice {
  std::vector<int> counts;    // ascending, counts[0] == 0
  std::vector<double> value;  // value[0] == 0
};

// Index into each job's counts; the chosen counts sum to at most `gpus`.
std::vector<size_t> GreedyCounts(std::span<const CountChoice> jobs, int gpus);
std::vector<size_t> ExactCounts(std::span<const CountChoice> jobs, int gpus);

double TotalValue(std::span<const CountChoice> jobs, const std::vector<size_t>& at);

}  // namespace parasol::sched
