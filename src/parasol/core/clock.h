// Time as parasol's components choose to spend it: polling intervals, injected delays, a straggler's
// extra work, the time a test wants to pass. LevelDB's Env has NowMicros and SleepForMicroseconds
// for the same reason: a test that drives the clock orders events by moving time, not by hoping a
// sleep was long enough on a loaded machine.
//
// Deadlines stay on the machine's steady clock: they bound real waits (condition variables, the
// network, child processes) and exist so that nothing hangs, whatever a test does with its clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>

#include "parasol/core/deadline.h"
#include "parasol/core/mutex.h"

namespace parasol {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  virtual TimePoint Now() = 0;
  // Returns once Now() >= t.
  virtual void SleepUntil(TimePoint t) = 0;
  void SleepFor(std::chrono::nanoseconds d) { SleepUntil(Now() + d); }

  // True when time moves only when a test moves it (ManualClock): a waiter then must not sleep
  // until one of this clock's time points on the machine's clock, but wait to be told.
  virtual bool driven() const { return false; }
  // Calls `moved` after each move of a driven clock, from the thread that moved it; the system
  // clock never calls it. `moved` may read Now() but not add or remove listeners. Returns a handle
  // for RemoveListener, after which `moved` is not running and is never called again.
  virtual uint64_t AddListener(std::function<void()> moved) {
    (void)moved;
    return 0;
  }
  virtual void RemoveListener(uint64_t handle) { (void)handle; }
};

// The machine's steady clock. Holds no state: make one where it is needed.
class SystemClock final : public Clock {
 public:
  TimePoint Now() override { return std::chrono::steady_clock::now(); }
  void SleepUntil(TimePoint t) override;
};

// A clock a test drives: time stands still until Advance, and sleepers wake when it reaches
// their time. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = std::chrono::steady_clock::now()) : now_(start) {}

  TimePoint Now() override PARASOL_EXCLUDES(mu_);
  void SleepUntil(TimePoint t) override PARASOL_EXCLUDES(mu_);
  bool driven() const override { return true; }
  uint64_t AddListener(std::function<void()> moved) override PARASOL_EXCLUDES(listeners_mu_);
  void RemoveListener(uint64_t handle) override PARASOL_EXCLUDES(listeners_mu_);

  // Moves time forward by `d` (>= 0), wakes the sleepers it reaches and calls the listeners.
  void Advance(std::chrono::nanoseconds d) PARASOL_EXCLUDES(mu_, listeners_mu_);
  // Threads asleep on this clock: inside SleepUntil with their wake-up time still ahead (one that
  // time has reached no longer counts, even before its thread has run again).
  int sleepers() PARASOL_EXCLUDES(mu_);
  // Blocks until at least `n` threads sleep on this clock; false if `deadline` (the machine's
  // clock) passes first. How a test knows a thread has reached its wait before moving time, and
  // that the thread it woke last has gone to sleep again.
  bool WaitForSleepers(int n, Deadline deadline) PARASOL_EXCLUDES(mu_);

 private:
  int SleepersLocked() PARASOL_REQUIRES(mu_);

  Mutex mu_;
  CondVar moved_;  // time moved, or the number of sleepers changed
  TimePoint now_ PARASOL_GUARDED_BY(mu_);
  std::multiset<TimePoint> wake_ups_ PARASOL_GUARDED_BY(mu_);  // of the threads in SleepUntil
  // Held while listeners run, so that RemoveListener waits for a call in progress.
  Mutex listeners_mu_;
  uint64_t next_listener_ PARASOL_GUARDED_BY(listeners_mu_) = 1;
  std::map<uint64_t, std::function<void()>> listeners_ PARASOL_GUARDED_BY(listeners_mu_);
};

}  // namespace parasol
