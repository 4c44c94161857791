#include "parasol/core/task_group.h"

#include <utility>

#include "parasol/core/error.h"

namespace parasol {

TaskGroup::TaskGroup(ThreadPool* pool) : pool_(pool) {}

TaskGroup::~TaskGroup() {
  for (std::future<void>& f : tasks_) {
    if (f.valid()) f.wait();
  }
}

size_t TaskGroup::Run(std::function<void()> fn) {
  if (pool_) {
    tasks_.push_back(pool_->Submit(std::move(fn)));
  } else {
    fn();
    tasks_.emplace_back();  // done: nothing to wait for
  }
  return tasks_.size() - 1;
}

void TaskGroup::WaitFor(size_t i) {
  if (tasks_.at(i).valid()) tasks_[i].get();
}

void TaskGroup::Fail(std::exception_ptr error) { Note(std::move(error)); }

void TaskGroup::Note(std::exception_ptr error) {
  if (!error) return;
  if (!first_) first_ = error;
  if (cause_) return;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kAborted) cause_ = error;
  } catch (...) {
    cause_ = error;
  }
}

std::exception_ptr TaskGroup::Join(const std::function<void()>& poll, std::chrono::microseconds interval) {
  for (std::future<void>& f : tasks_) {
    if (!f.valid()) continue;
    try {
      while (poll && !first_ && f.wait_for(interval) != std::future_status::ready) poll();
    } catch (...) {
      Note(std::current_exception());
    }
    try {
      f.get();
    } catch (...) {
      Note(std::current_exception());
    }
  }
  tasks_.clear();
  std::exception_ptr chosen = cause_ ? cause_ : first_;
  first_ = cause_ = nullptr;
  return chosen;
}

void TaskGroup::Wait(const std::function<void()>& poll, std::chrono::microseconds interval) {
  if (std::exception_ptr error = Join(poll, interval)) std::rethrow_exception(error);
}

}  // namespace parasol
