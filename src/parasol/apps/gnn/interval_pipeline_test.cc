#include "parasol/apps/gnn/interval_pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "parasol/core/mutex.h"

namespace parasol::apps::gnn {
namespace {

TEST(IntervalPipelineTest, CutsRowsIntoIntervals) {
  IntervalPipeline p({.interval_rows = 4});
  const std::vector<RowRange> iv = p.Intervals({3, 13});
  ASSERT_EQ(iv.size(), 3u);
  EXPECT_EQ(iv[0].begin, 3u);
  EXPECT_EQ(iv[0].end, 7u);
  EXPECT_EQ(iv[2].begin, 11u);
  EXPECT_EQ(iv[2].end, 13u);
  EXPECT_TRUE(p.Intervals({5, 5}).empty());
}

// Every graph and tensor task runs once, each interval's tensor task after its graph task, for
// every placement of the two kinds. With a pool, interval i's graph task waits until interval
// i - 1's tensor task has started: only a pipeline that overlaps the two gets through.
TEST(IntervalPipelineTest, RunsEachTensorTaskAfterItsGraphTaskAndOverlapsThem) {
  for (auto [g, t] : {std::pair<size_t, size_t>{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 3}}) {
    IntervalPipeline p({.graph_threads = g, .tensor_threads = t, .interval_rows = 1});
    const size_t n = 50;
    const bool overlaps = g > 0 || t > 0;
    std::vector<std::atomic<int>> graph_done(n), tensor_done(n);
    std::atomic<bool> order_broken{false}, waited_out{false};
    Mutex mu;
    CondVar cv;
    std::vector<bool> tensor_started(n, false);
    p.Run(
        n,
        [&](size_t i) {
          if (overlaps && i > 0) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            MutexLock lock(mu);
            while (!tensor_started[i - 1]) {
              if (!cv.WaitUntil(mu, until) && std::chrono::steady_clock::now() >= until) {
                waited_out = true;
                break;
              }
            }
          }
          ++graph_done[i];
        },
        [&](size_t i) {
          {
            MutexLock lock(mu);
            tensor_started[i] = true;
            cv.NotifyAll();
          }
          if (graph_done[i] != 1) order_broken = true;
          ++tensor_done[i];
        });
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(graph_done[i], 1) << g << " graph threads, " << t << " tensor threads, interval " << i;
      ASSERT_EQ(tensor_done[i], 1) << g << " graph threads, " << t << " tensor threads, interval " << i;
    }
    EXPECT_FALSE(order_broken) << g << " graph threads, " << t << " tensor threads";
    EXPECT_FALSE(waited_out) << g << " graph threads, " << t << " tensor threads: no overlap";
  }
}

// A task's error reaches the caller once the other tasks have ended (they use the caller's data).
TEST(IntervalPipelineTest, ATaskErrorReachesTheCaller) {
  for (size_t threads : {0u, 1u, 2u}) {
    IntervalPipeline p({.graph_threads = threads, .tensor_threads = threads, .interval_rows = 1});
    std::atomic<int> running{0};
    EXPECT_THROW(p.Run(
                     20, [&](size_t) { std::this_thread::sleep_for(std::chrono::microseconds(100)); },
                     [&](size_t i) {
                       ++running;
                       std::this_thread::sleep_for(std::chrono::microseconds(100));
                       --running;
                       if (i == 5) throw std::runtime_error("tensor task 5");
                     }),
                 std::runtime_error);
    EXPECT_EQ(running, 0);
  }
}

}  // namespace
}  // namespace parasol::apps::gnn
