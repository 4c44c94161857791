// A fixed pool of worker threads. Tasks run in submission order as workers free up.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "parasol/core/mutex.h"

namespace parasol {

class ThreadPool {
 public:
  // threads == 0: one per hardware thread.
  explicit ThreadPool(size_t threads = 0);
  // Finishes the queued tasks, then joins the workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t size() const { return workers_.size(); }

  // Runs fn on a worker; the future carries its result or exception.
  std::future<void> Submit(std::function<void()> fn);

  // Runs fn(i) for i in [begin, end) across the workers and waits. Rethrows an error as TaskGroup does.
  void ParallelFor(size_t begin, size_t end, const std::function<void(size_t)>& fn);

 private:
  void Work();

  Mutex mu_;
  CondVar cv_;
  std::deque<std::packaged_task<void()>> tasks_ PARASOL_GUARDED_BY(mu_);
  bool stopping_ PARASOL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace parasol
