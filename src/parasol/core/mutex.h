// A mutex, its scoped lock and a condition variable that clang's thread-safety analysis
// understands (-Wthread-safety, on in every clang build: the fuzz and sanitizer presets): state
// marked PARASOL_GUARDED_BY(mu_) is then touched only with mu_ held, checked at compile time.
// With other compilers the annotations are empty and these are thin wrappers of std::mutex.
//
// Waits are written as loops in the function holding the lock (`while (!ready_) cv_.Wait(mu_);`)
// rather than with predicate lambdas, whose bodies the analysis cannot see the lock around.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define PARASOL_TSA(x) __attribute__((x))
#else
#define PARASOL_TSA(x)
#endif

#define PARASOL_CAPABILITY(x) PARASOL_TSA(capability(x))
#define PARASOL_SCOPED_CAPABILITY PARASOL_TSA(scoped_lockable)
#define PARASOL_GUARDED_BY(x) PARASOL_TSA(guarded_by(x))
#define PARASOL_PT_GUARDED_BY(x) PARASOL_TSA(pt_guarded_by(x))
#define PARASOL_REQUIRES(...) PARASOL_TSA(requires_capability(__VA_ARGS__))
#define PARASOL_ACQUIRE(...) PARASOL_TSA(acquire_capability(__VA_ARGS__))
#define PARASOL_RELEASE(...) PARASOL_TSA(release_capability(__VA_ARGS__))
#define PARASOL_EXCLUDES(...) PARASOL_TSA(locks_excluded(__VA_ARGS__))
#define PARASOL_NO_THREAD_SAFETY_ANALYSIS PARASOL_TSA(no_thread_safety_analysis)

namespace parasol {

class PARASOL_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() PARASOL_ACQUIRE() { mu_.lock(); }
  void unlock() PARASOL_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope; Unlock() and Lock() let a scope step out of it for a while.
class PARASOL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) PARASOL_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() PARASOL_RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() PARASOL_RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void Lock() PARASOL_ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

class CondVar {
 public:
  // Releases mu while waiting for a notification (or a spurious wake-up), holds it again after.
  void Wait(Mutex& mu) PARASOL_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait; false once `deadline` has passed.
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline) PARASOL_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace parasol
