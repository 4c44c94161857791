#include "parasol/core/clock.h"

#include <iterator>
#include <thread>

namespace parasol {

void SystemClock::SleepUntil(TimePoint t) { std::this_thread::sleep_until(t); }

Clock::TimePoint ManualClock::Now() {
  MutexLock lock(mu_);
  return now_;
}

void ManualClock::SleepUntil(TimePoint t) {
  MutexLock lock(mu_);
  if (now_ >= t) return;
  const auto wake_up = wake_ups_.insert(t);
  moved_.NotifyAll();
  while (now_ < t) moved_.Wait(mu_);
  wake_ups_.erase(wake_up);
}

uint64_t ManualClock::AddListener(std::function<void()> moved) {
  MutexLock lock(listeners_mu_);
  const uint64_t handle = next_listener_++;
  listeners_.emplace(handle, std::move(moved));
  return handle;
}

void ManualClock::RemoveListener(uint64_t handle) {
  MutexLock lock(listeners_mu_);
  listeners_.erase(handle);
}

void ManualClock::Advance(std::chrono::nanoseconds d) {
  {
    MutexLock lock(mu_);
    if (d.count() > 0) now_ += d;
    moved_.NotifyAll();
  }
  // Without mu_: a listener takes its own locks and may read Now().
  MutexLock lock(listeners_mu_);
  for (const auto& [handle, moved] : listeners_) moved();
}

int ManualClock::SleepersLocked() {
  return static_cast<int>(std::distance(wake_ups_.upper_bound(now_), wake_ups_.end()));
}

int ManualClock::sleepers() {
  MutexLock lock(mu_);
  return SleepersLocked();
}

bool ManualClock::WaitForSleepers(int n, Deadline deadline) {
  MutexLock lock(mu_);
  while (SleepersLocked() < n) {
    if (!moved_.WaitUntil(mu_, deadline.time()) && SleepersLocked() < n) return false;
  }
  return true;
}

}  // namespace parasol
