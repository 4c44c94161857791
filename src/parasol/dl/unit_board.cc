#include "parasol/dl/unit_board.h"

#include <algorithm>
#include <cassert>

namespace parasol::dl {

UnitBoard::UnitBoard(std::vector<int> unit_stage, int num_stages)
    : unit_stage_(std::move(unit_stage)),
      launched_(unit_stage_.size(), false),
      done_(unit_stage_.size(), true),
      stage_left_(static_cast<size_t>(num_stages), 0),
      local_frontier_(num_stages) {
  for ([[maybe_unused]] int s : unit_stage_) assert(s >= 0 && s < num_stages);
}

void UnitBoard::LowerFrontier() {
  while (local_frontier_ > 0 && stage_left_[static_cast<size_t>(local_frontier_ - 1)] == 0) --local_frontier_;
}

void UnitBoard::BeginStep() {
  {
    MutexLock lock(mu_);
    std::fill(stage_left_.begin(), stage_left_.end(), 0);
    for (size_t u = 0; u < unit_stage_.size(); ++u) {
      assert(done_[u]);
      done_[u] = false;
      launched_[u] = false;
      stage_left_[static_cast<size_t>(unit_stage_[u])]++;
    }
    local_frontier_ = static_cast<int>(stage_left_.size());
    LowerFrontier();
    ++steps_begun_;
  }
  cv_.NotifyAll();
}

void UnitBoard::Launch(int u) {
  {
    MutexLock lock(mu_);
    launched_[static_cast<size_t>(u)] = true;
    --stage_left_[static_cast<size_t>(unit_stage_[static_cast<size_t>(u)])];
    LowerFrontier();
  }
  cv_.NotifyAll();
}

bool UnitBoard::WaitDone(int first, int end, std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu_);
  auto all_done = [&]() PARASOL_REQUIRES(mu_) {
    for (int u = first; u < end; ++u) {
      if (!done_[static_cast<size_t>(u)]) return false;
    }
    return true;
  };
  bool waiting = true;
  while (waiting && !error_ && !all_done()) waiting = cv_.WaitUntil(mu_, deadline);
  if (error_) std::rethrow_exception(error_);
  return all_done();
}

void UnitBoard::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
}

bool UnitBoard::failed() const {
  MutexLock lock(mu_);
  return error_ != nullptr;
}

bool UnitBoard::TakeStep() {
  MutexLock lock(mu_);
  while (!stop_ && steps_begun_ == steps_taken_) cv_.Wait(mu_);
  if (stop_) return false;
  ++steps_taken_;
  return true;
}

bool UnitBoard::TakeLaunch(int u) {
  MutexLock lock(mu_);
  while (!stop_ && !launched_[static_cast<size_t>(u)]) cv_.Wait(mu_);
  if (stop_) return false;
  launched_[static_cast<size_t>(u)] = false;
  return true;
}

void UnitBoard::MarkDone(int u) {
  {
    MutexLock lock(mu_);
    done_[static_cast<size_t>(u)] = true;
    ++units_done_;
  }
  cv_.NotifyAll();
}

bool UnitBoard::WaitFrontierBelow(int frontier) {
  MutexLock lock(mu_);
  while (!stop_ && local_frontier_ >= frontier) cv_.Wait(mu_);
  return !stop_;
}

void UnitBoard::Fail(std::exception_ptr error) {
  {
    MutexLock lock(mu_);
    if (!error_) error_ = std::move(error);
  }
  cv_.NotifyAll();
}

int UnitBoard::local_frontier() const {
  MutexLock lock(mu_);
  return local_frontier_;
}

uint64_t UnitBoard::units_done() const {
  MutexLock lock(mu_);
  return units_done_;
}

}  // namespace parasol::dl
