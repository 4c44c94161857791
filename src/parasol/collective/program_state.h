// The rules by which a Program runs, shared by the executor and the network simulator: an op may
// start when its issue dependencies are complete and the previous op of its stream has started;
// a receive-reduce completes once its data has arrived and its apply dependencies are complete.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "parasol/collective/schedule.h"

namespace parasol::collective {

class ProgramState {
 public:
  void Reset(const Program& p) {
    program_ = &p;
    const size_t n = p.ops.size();
    issue_wait_.resize(n);
    apply_wait_.resize(n);
    flags_.assign(n, 0);
    ready_.clear();
    completed_ = 0;
    for (size_t i = 0; i < n; ++i) {
      const Op& op = p.ops[i];
      issue_wait_[i] = (op.dep_apply - op.dep_begin) + (p.queue_prev[i] >= 0 ? 1 : 0);
      apply_wait_[i] = op.dep_end - op.dep_apply;
      if (issue_wait_[i] == 0) ready_.push_back(static_cast<uint32_t>(i));
    }
    std::make_heap(ready_.begin(), ready_.end(), std::greater<>());
  }

  bool HasReady() const { return !ready_.empty(); }
  // The ready op with the lowest index: program order is the algorithm's preferred order.
  uint32_t PopReady() {
    std::pop_heap(ready_.begin(), ready_.end(), std::greater<>());
    uint32_t op = ready_.back();
    ready_.pop_back();
    return op;
  }

  // The op has been started (posted); the next op of its stream may start.
  void MarkIssued(uint32_t op) {
    flags_[op] |= kIssued;
    int32_t next = program_->queue_next[op];
    if (next >= 0) Release(static_cast<uint32_t>(next));
  }

  // The op's transfer finished (a send left, a message arrived, a copy was done). Completes it,
  // and every op that thereby completes; apply(op) is called for each receive-reduce just before
  // it completes, so the caller performs the reduction at the right moment.
  template <typename ApplyFn>
  void TransferDone(uint32_t op, ApplyFn&& apply) {
    flags_[op] |= kTransferred;
    if (program_->ops[op].kind == OpKind::kRecvReduce && apply_wait_[op] != 0) return;
    work_.clear();
    work_.push_back(op);
    while (!work_.empty()) {
      uint32_t o = work_.back();
      work_.pop_back();
      if (program_->ops[o].kind == OpKind::kRecvReduce) apply(o);
      Complete(o);
    }
  }

  bool done() const { return completed_ == program_->ops.size(); }
  size_t completed() const { return completed_; }
  bool issued(uint32_t op) const { return flags_[op] & kIssued; }
  bool transferred(uint32_t op) const { return flags_[op] & kTransferred; }
  bool complete(uint32_t op) const { return flags_[op] & kComplete; }

 private:
  static constexpr uint8_t kIssued = 1, kTransferred = 2, kComplete = 4;

  void Release(uint32_t op) {
    if (--issue_wait_[op] == 0) {
      ready_.push_back(op);
      std::push_heap(ready_.begin(), ready_.end(), std::greater<>());
    }
  }

  void Complete(uint32_t op) {
    flags_[op] |= kComplete;
    ++completed_;
    const Program& p = *program_;
    for (uint32_t i = p.issue_succ_begin[op]; i < p.issue_succ_begin[op + 1]; ++i) Release(p.issue_succ[i]);
    for (uint32_t i = p.apply_succ_begin[op]; i < p.apply_succ_begin[op + 1]; ++i) {
      uint32_t s = p.apply_succ[i];
      if (--apply_wait_[s] == 0 && (flags_[s] & kTransferred)) work_.push_back(s);
    }
  }

  const Program* program_ = nullptr;
  std::vector<uint32_t> issue_wait_;
  std::vector<uint32_t> apply_wait_;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> ready_;
  std::vector<uint32_t> work_;
  size_t completed_ = 0;
};

}  // namespace parasol::collective
