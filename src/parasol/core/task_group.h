// Tasks on a ThreadPool waited for together. Tasks usually read the caller's frame, so no error
// leaves before every task has ended: Wait() joins them all, then rethrows one error. Of several,
// the one that says what went wrong: the first that is not an AbortedError (the echo of a failure
// elsewhere, which other tasks or ranks raise once they hear of it), else the first.
//
// Threading: one thread (the owner) calls everything; the tasks run on the pool's threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <future>
#include <vector>

#include "parasol/core/thread_pool.h"

namespace parasol {

class TaskGroup {
 public:
  // How often Join and Wait call their `poll` unless told otherwise.
  static constexpr std::chrono::microseconds kPollInterval{200};

  // pool null: each task runs on the owner's thread inside Run, and its error leaves Run.
  explicit TaskGroup(ThreadPool* pool);
  // Waits for the tasks not yet waited for; their errors are dropped (an error is already
  // leaving, or the owner chose not to Wait).
  ~TaskGroup();
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  // Starts fn; returns its index for WaitFor.
  size_t Run(std::function<void()> fn);
  // Waits for task i alone and rethrows its error (it is not rethrown again by Wait).
  void WaitFor(size_t i);
  // An error the owner met beside the tasks: Wait weighs it with theirs.
  void Fail(std::exception_ptr error);
  // Waits for every task. While waiting, until an error is known, calls `poll` every `interval`
  // (work only the owner's thread may do, such as driving messages); its errors count as the
  // tasks'. Returns the error chosen as above, or null.
  std::exception_ptr Join(const std::function<void()>& poll = {},
                          std::chrono::microseconds interval = kPollInterval);
  // Join, then rethrows its error.
  void Wait(const std::function<void()>& poll = {}, std::chrono::microseconds interval = kPollInterval);

 private:
  void Note(std::exception_ptr error);

  ThreadPool* pool_;
  std::vector<std::future<void>> tasks_;
  std::exception_ptr first_, cause_;
};

}  // namespace parasol
