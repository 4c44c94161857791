// A long-lived thread of an object's own, such as a communication thread: its loop runs until it
// returns or is asked to stop (through the std::stop_token it is given). An exception that leaves
// the loop goes to `on_error`, which must tell whoever waits on the thread's work; it never ends
// the process in std::terminate.
//
// Threading: Stop may be called from any thread, by several at once (a failing worker and the
// owner's destructor): the first joins, the others wait until it has. Called from the loop itself
// it only asks the loop to stop.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <stop_token>
#include <thread>

#include "parasol/core/mutex.h"

namespace parasol {

class ServiceThread {
 public:
  using Loop = std::function<void(std::stop_token)>;
  using OnError = std::function<void(std::exception_ptr)>;

  ServiceThread() = default;  // not running until Start
  ~ServiceThread() { Stop(); }
  ServiceThread(const ServiceThread&) = delete;
  ServiceThread& operator=(const ServiceThread&) = delete;

  // REQUIRES: not started before.
  void Start(Loop loop, OnError on_error) PARASOL_EXCLUDES(mu_);
  // Asks the loop to stop, calls `wake` (for a loop asleep on a condition: notify it, holding its
  // mutex so the notification cannot fall between its check and its wait), waits for it to end.
  void Stop(const std::function<void()>& wake = {}) PARASOL_EXCLUDES(mu_);
  // Whether a stop was asked (from any thread).
  bool stop_requested() const { return stop_.stop_requested(); }

 private:
  std::stop_source stop_;
  std::atomic<std::thread::id> id_{};
  Mutex mu_;
  std::thread thread_ PARASOL_GUARDED_BY(mu_);
};

}  // namespace parasol
