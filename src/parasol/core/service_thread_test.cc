#include "parasol/core/service_thread.h"

#include <atomic>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol {
namespace {

TEST(ServiceThread, AStopWakesALoopAsleepOnItsConditionAndJoinsIt) {
  Mutex mu;
  CondVar cv;
  std::atomic<bool> returned{false};
  ServiceThread thread;
  thread.Start(
      [&](std::stop_token stop) {
        MutexLock lock(mu);
        while (!stop.stop_requested()) cv.Wait(mu);  // no timeout: only the wake can end it
        returned = true;
      },
      [](std::exception_ptr) { FAIL() << "the loop did not throw"; });
  thread.Stop([&] {
    MutexLock lock(mu);
    cv.NotifyAll();
  });
  EXPECT_TRUE(returned.load()) << "Stop returned before the loop ended";
  EXPECT_TRUE(thread.stop_requested());
  thread.Stop();  // again: nothing left to do
}

TEST(ServiceThread, TheLoopsErrorGoesToItsHandlerNotToTerminate) {
  std::exception_ptr seen;
  std::atomic<bool> handled{false};
  ServiceThread thread;
  thread.Start([](std::stop_token) { throw PeerGoneError("rank 0: parameter server: peer 3 is gone"); },
               [&](std::exception_ptr e) {
                 seen = e;
                 handled = true;
               });
  thread.Stop();
  ASSERT_TRUE(handled.load());
  EXPECT_THROW(std::rethrow_exception(seen), PeerGoneError);
}

TEST(ServiceThread, StopFromSeveralThreadsAtOnceAndFromTheLoopItself) {
  std::atomic<int> iterations{0};
  std::atomic<bool> returned{false};
  std::latch running(1);
  ServiceThread thread;
  thread.Start(
      [&](std::stop_token stop) {
        while (!stop.stop_requested()) {
          if (++iterations == 1) running.count_down();
          if (iterations == 1000) thread.Stop();  // the loop stops itself: must not join itself
        }
        returned = true;
      },
      [](std::exception_ptr) { FAIL(); });
  running.wait();  // the stoppers then race the loop's own Stop, not its start
  std::vector<std::thread> stoppers;
  for (int i = 0; i < 4; ++i) stoppers.emplace_back([&] { thread.Stop(); });
  for (std::thread& t : stoppers) t.join();
  EXPECT_TRUE(thread.stop_requested());
  EXPECT_TRUE(returned.load()) << "a Stop returned before the loop ended";
}

TEST(ServiceThread, ANeverStartedThreadStopsAtOnce) {
  ServiceThread thread;
  thread.Stop();
  EXPECT_TRUE(thread.stop_requested());
}

}  // namespace
}  // namespace parasol
