// The two count searches against brute force on small random instances, and the case where the
// greedy's envelope misses the optimum (a running job whose current count is worth a restart).
#include "parasol/sched/count_search.h"

#include <functional>
#include <random>

#include <gtest/gtest.h>

namespace parasol::sched {
namespace {

double BruteForce(const std::vector<CountChoice>& jobs, int gpus) {
  double best = 0;
  std::function<void(size_t, int, double)> go = [&](size_t j, int left, double v) {
    if (j == jobs.size()) {
      best = std::max(best, v);
      return;
    }
    for (size_t k = 0; k < jobs[j].counts.size(); ++k) {
      if (jobs[j].counts[k] <= left) go(j + 1, left - jobs[j].counts[k], v + jobs[j].value[k]);
    }
  };
  go(0, gpus, 0);
  return best;
}

int Used(const std::vector<CountChoice>& jobs, const std::vector<size_t>& at) {
  int used = 0;
  for (size_t j = 0; j < jobs.size(); ++j) used += jobs[j].counts[at[j]];
  return used;
}

// Counts 0,1,2,3,4,8,12 (the policy's shape) with values from `f`.
CountChoice Make(const std::function<double(int)>& f) {
  CountChoice c{{0, 1, 2, 3, 4, 8, 12}, {}};
  for (int n : c.counts) c.value.push_back(n == 0 ? 0.0 : f(n));
  return c;
}

TEST(CountSearch, ExactMatchesBruteForceAndGreedyIsOptimalWhenConcave) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.1, 2.0);
  for (int trial = 0; trial < 40; ++trial) {
    const int gpus = 4 + trial % 13;
    std::vector<CountChoice> concave, any;
    for (int j = 0; j < 4; ++j) {
      const double w = u(rng), p = 0.3 + 0.6 * u(rng) / 2.0;
      concave.push_back(Make([&](int n) { return w * std::pow(n, p); }));
      any.push_back(Make([&](int) { return u(rng); }));
    }
    for (const auto* jobs : {&concave, &any}) {
      const auto exact = ExactCounts(*jobs, gpus);
      EXPECT_LE(Used(*jobs, exact), gpus);
      EXPECT_NEAR(TotalValue(*jobs, exact), BruteForce(*jobs, gpus), 1e-9) << "trial " << trial;
      const auto greedy = GreedyCounts(*jobs, gpus);
      EXPECT_LE(Used(*jobs, greedy), gpus);
      EXPECT_LE(TotalValue(*jobs, greedy), TotalValue(*jobs, exact) + 1e-9);
    }
    // Concave speedups: the greedy is optimal up to the last partly filled step, so within one
    // step's value of the optimum; with every count from 0 to 4 available it is exact.
    std::vector<CountChoice> small;
    for (const CountChoice& c : concave)
      small.push_back({{0, 1, 2, 3, 4}, {c.value.begin(), c.value.begin() + 5}});
    EXPECT_NEAR(TotalValue(small, GreedyCounts(small, gpus)), BruteForce(small, gpus), 1e-9)
        << "trial " << trial;
  }
}

// Job A runs on 8 GPUs with speedup n^0.8; any other count costs it a restart (values x 0.9).
// Job B, new, gains 0.62 per GPU up to 4. On 8 GPUs the best is A staying at 8 (5.28) rather
// than A at 4 and B at 4 (2.73 + 2.48 = 5.21); the greedy grows A to 2, then prefers B's 0.62 per
// GPU to A's 0.618 average from 2 to 8, and A ends at 4.
TEST(CountSearch, ExactKeepsARunningJobTheGreedyWouldRestart) {
  std::vector<CountChoice> jobs{{{0, 1, 2, 3, 4, 8}, {0, 0.90, 1.57, 2.17, 2.73, 5.28}},
                                {{0, 1, 2, 3, 4}, {0, 0.62, 1.24, 1.86, 2.48}}};
  const auto exact = ExactCounts(jobs, 8);
  EXPECT_EQ(jobs[0].counts[exact[0]], 8);
  EXPECT_EQ(jobs[1].counts[exact[1]], 0);
  const auto greedy = GreedyCounts(jobs, 8);
  EXPECT_EQ(jobs[0].counts[greedy[0]], 4);
  EXPECT_EQ(jobs[1].counts[greedy[1]], 4);
  EXPECT_NEAR(TotalValue(jobs, greedy), 5.21, 1e-9);
}

}  // namespace
}  // namespace parasol::sched
