#include "parasol/sched/count_search.h"

#include <cstdint>
#include <queue>

namespace parasol::sched {

namespace {

struct Candidate {
  double gain_per_gpu;
  size_t job;
  size_t to;  // index in the job's counts
  bool operator<(const Candidate& o) const { return gain_per_gpu < o.gain_per_gpu; }
};

// From point `at`, the point among the first `end` with the most value per added GPU (the next
// vertex of the concave envelope).
Candidate NextStep(const CountChoice& c, size_t at, size_t end, size_t job) {
  Candidate best{0, job, at};
  for (size_t k = at + 1; k < end; ++k) {
    const double g = (c.value[k] - c.value[at]) / (c.counts[k] - c.counts[at]);
    if (g > best.gain_per_gpu) best = {g, job, k};
  }
  return best;
}

}  // namespace

std::vector<size_t> GreedyCounts(std::span<const CountChoice> jobs, int gpus) {
  int free = gpus;
  std::vector<size_t> at(jobs.size(), 0);
  std::priority_queue<Candidate> heap;
  for (size_t j = 0; j < jobs.size(); ++j) heap.push(NextStep(jobs[j], 0, jobs[j].counts.size(), j));
  while (!heap.empty() && free > 0) {
    const Candidate c = heap.top();
    heap.pop();
    if (c.gain_per_gpu <= 0 || c.to == at[c.job]) continue;
    const CountChoice& job = jobs[c.job];
    const int add = job.counts[c.to] - job.counts[at[c.job]];
    if (add > free) {  // too big: the job's smaller steps
      Candidate smaller = NextStep(job, at[c.job], c.to, c.job);
      if (smaller.to != at[c.job]) heap.push(smaller);
      continue;
    }
    free -= add;
    at[c.job] = c.to;
    heap.push(NextStep(job, at[c.job], job.counts.size(), c.job));
  }
  return at;
}

std::vector<size_t> ExactCounts(std::span<const CountChoice> jobs, int gpus) {
  // best[g]: the most value the jobs so far reach with at most g GPUs; choice[j][g]: job j's point.
  const size_t n = jobs.size(), cap = static_cast<size_t>(gpus) + 1;
  std::vector<double> best(cap, 0.0), next(cap);
  std::vector<uint16_t> choice(n * cap, 0);
  for (size_t j = 0; j < n; ++j) {
    for (size_t g = 0; g < cap; ++g) {
      double top = best[g];
      uint16_t pick = 0;
      for (size_t k = 1; k < jobs[j].counts.size(); ++k) {
        const size_t c = static_cast<size_t>(jobs[j].counts[k]);
        if (c > g) break;
        if (const double v = best[g - c] + jobs[j].value[k]; v > top)
          top = v, pick = static_cast<uint16_t>(k);
      }
      next[g] = top;
      choice[j * cap + g] = pick;
    }
    best.swap(next);
  }
  std::vector<size_t> at(n, 0);
  size_t g = cap - 1;
  for (size_t j = n; j-- > 0;) {
    at[j] = choice[j * cap + g];
    g -= static_cast<size_t>(jobs[j].counts[at[j]]);
  }
  return at;
}

double TotalValue(std::span<const CountChoice> jobs, const std::vector<size_t>& at) {
  double v = 0;
  for (size_t j = 0; j < jobs.size(); ++j) v += jobs[j].value[at[j]];
  return v;
}

}  // namespace parasol::sched
