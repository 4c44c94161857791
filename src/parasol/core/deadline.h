// A point in time by which a blocking call must return. Every blocking call in parasol takes one.
#pragma once

#include <chrono>

namespace parasol {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  static Deadline After(std::chrono::nanoseconds d) { return Deadline(Clock::now() + d); }
  static Deadline At(Clock::time_point t) { return Deadline(t); }
  static Deadline Never() { return Deadline(Clock::time_point::max()); }

  Clock::time_point time() const { return t_; }
  bool never() const { return t_ == Clock::time_point::max(); }
  bool Expired() const { return !never() && Clock::now() >= t_; }
  bool ExpiredAt(Clock::time_point now) const { return !never() && now >= t_; }
  // Time left, zero once expired; a very large value for Never().
  std::chrono::nanoseconds Remaining() const {
    if (never()) return std::chrono::nanoseconds::max();
    auto left = t_ - Clock::now();
    return left.count() > 0 ? std::chrono::duration_cast<std::chrono::nanoseconds>(left)
                            : std::chrono::nanoseconds::zero();
  }
  // The earlier of two deadlines.
  static Deadline Min(Deadline a, Deadline b) { return a.t_ < b.t_ ? a : b; }

 private:
  explicit Deadline(Clock::time_point t) : t_(t) {}
  Clock::time_point t_;
};

}  // namespace parasol
