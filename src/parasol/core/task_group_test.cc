#include "parasol/core/task_group.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol {
namespace {

std::string WhatOf(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

TEST(TaskGroup, AnErrorLeavesOnlyOnceEveryTaskHasEnded) {
  ThreadPool pool(4);
  std::atomic<bool> gate{false};
  std::atomic<int> finished{0};
  TaskGroup group(&pool);
  group.Run([&] {
    gate = true;  // the others finish only after this task has failed
    throw IoError("disk full");
  });
  for (int i = 0; i < 3; ++i) {
    group.Run([&] {
      while (!gate) std::this_thread::yield();
      for (int spin = 0; spin < 100; ++spin) std::this_thread::yield();  // running when the error is in
      ++finished;
    });
  }
  EXPECT_THROW(group.Wait(), IoError);
  EXPECT_EQ(finished.load(), 3);
}

TEST(TaskGroup, TheCauseWinsOverTheAbortsThatEchoIt) {
  ThreadPool pool(2);
  TaskGroup group(&pool);
  group.Run([] { throw AbortedError("rank 1 failed"); });  // first in order, but an echo
  group.Run([] { throw TimeoutError("rank 1: no answer from peer 2"); });
  group.Run([] { throw AbortedError("rank 1 failed"); });
  const std::exception_ptr e = group.Join();
  ASSERT_TRUE(e);
  EXPECT_EQ(WhatOf(e), "rank 1: no answer from peer 2");
  EXPECT_FALSE(group.Join()) << "a joined group starts clean";

  TaskGroup aborts(&pool);
  aborts.Run([] { throw AbortedError("first"); });
  aborts.Run([] { throw AbortedError("second"); });
  EXPECT_EQ(WhatOf(aborts.Join()), "first");  // only echoes: the first of them
}

TEST(TaskGroup, TheOwnersOwnErrorIsWeighedWithTheTasks) {
  ThreadPool pool(2);
  TaskGroup group(&pool);
  group.Run([] { throw AbortedError("echo"); });
  group.Fail(std::make_exception_ptr(std::runtime_error("the owner's schedule failed")));
  EXPECT_EQ(WhatOf(group.Join()), "the owner's schedule failed");
}

TEST(TaskGroup, PollRunsOnTheOwnersThreadWhileATaskWaitsForIt) {
  // The task can end only once the owner has polled: Join must keep polling while it waits.
  ThreadPool pool(1);
  std::atomic<int> polls{0};
  TaskGroup group(&pool);
  group.Run([&] {
    while (polls < 3) std::this_thread::yield();
  });
  const std::thread::id owner = std::this_thread::get_id();
  bool on_owner = true;
  group.Wait([&] {
    on_owner = on_owner && std::this_thread::get_id() == owner;
    ++polls;
  });
  EXPECT_GE(polls.load(), 3);
  EXPECT_TRUE(on_owner);
}

TEST(TaskGroup, WaitForOneTaskAndWithoutAPoolInline) {
  ThreadPool pool(2);
  TaskGroup group(&pool);
  int value = 0;
  const size_t i = group.Run([&] { value = 7; });
  group.Run([] { throw ParseError("f.txt", 3, "bad"); });
  group.WaitFor(i);
  EXPECT_EQ(value, 7);
  EXPECT_THROW(group.Wait(), ParseError);

  TaskGroup inline_group(nullptr);
  int calls = 0;
  inline_group.Run([&] { ++calls; });
  EXPECT_EQ(calls, 1) << "without a pool a task runs inside Run";
  EXPECT_THROW(inline_group.Run([] { throw std::logic_error("bug"); }), std::logic_error);
  inline_group.WaitFor(0);
  inline_group.Wait();
}

}  // namespace
}  // namespace parasol
