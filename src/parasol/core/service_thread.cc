#include "parasol/core/service_thread.h"

#include <utility>

namespace parasol {

void ServiceThread::Start(Loop loop, OnError on_error) {
  MutexLock lock(mu_);
  thread_ = std::thread([this, loop = std::move(loop), on_error = std::move(on_error)] {
    id_ = std::this_thread::get_id();  // before the loop can call Stop
    try {
      loop(stop_.get_token());
    } catch (...) {
      on_error(std::current_exception());
    }
  });
}

void ServiceThread::Stop(const std::function<void()>& wake) {
  stop_.request_stop();
  if (wake) wake();
  if (std::this_thread::get_id() == id_.load()) return;  // the loop itself: it returns next
  MutexLock lock(mu_);
  if (thread_.joinable()) thread_.join();
}

}  // namespace parasol
