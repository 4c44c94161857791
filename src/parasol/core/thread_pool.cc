#include "parasol/core/thread_pool.h"

#include <algorithm>
#include <atomic>

#include "parasol/core/task_group.h"

namespace parasol {

ThreadPool::ThreadPool(size_t threads) {
  if (threads == 0) threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  for (auto& w : workers_) w.join();
}

std::future<void> ThreadPool::Submit(std::function<void()> fn) {
  std::packaged_task<void()> task(std::move(fn));
  auto future = task.get_future();
  {
    MutexLock lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.NotifyOne();
  return future;
}

void ThreadPool::Work() {
  while (true) {
    std::packaged_task<void()> task;
    {
      MutexLock lock(mu_);
      while (!stopping_ && tasks_.empty()) cv_.Wait(mu_);
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void ThreadPool::ParallelFor(size_t begin, size_t end, const std::function<void(size_t)>& fn) {
  // One task per worker, each taking indices from a shared counter: cheap and balanced.
  std::atomic<size_t> next{begin};
  TaskGroup tasks(this);
  for (size_t w = 0; w < std::min(size(), end > begin ? end - begin : 0); ++w) {
    tasks.Run([&] {
      for (size_t i = next++; i < end; i = next++) fn(i);
    });
  }
  tasks.Wait();
}

}  // namespace parasol
