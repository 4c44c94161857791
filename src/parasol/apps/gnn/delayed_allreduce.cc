#include "parasol/apps/gnn/delayed_allreduce.h"

#include "parasol/collective/collectives.h"

namespace parasol::apps::gnn {

DelayedAllreduce::DelayedAllreduce(comm::Context& ctx, uint32_t staleness)
    : ctx_(ctx), staleness_(staleness), ring_(staleness + 1) {
  if (staleness_ == 0) return;
  background_ = ctx.Duplicate(ctx.DefaultDeadline());
  thread_ = std::make_unique<ThreadPool>(1);
}

DelayedAllreduce::~DelayedAllreduce() {
  for (InFlight& f : ring_) {
    if (!f.done.valid()) continue;
    try {
      f.done.get();
    } catch (const std::exception&) {  // training has ended; its error, if any, was reported
    }
  }
}

bool DelayedAllreduce::Push(std::span<const float> grad, std::vector<float>* sum) {
  if (staleness_ == 0) {
    sum->assign(grad.begin(), grad.end());
    collective::Allreduce<float>(ctx_, *sum);
    return true;
  }
  InFlight& mine = ring_[pushes_ % ring_.size()];
  mine.values.assign(grad.begin(), grad.end());
  mine.done = thread_->Submit([this, &mine] { collective::Allreduce<float>(*background_, mine.values); });
  ++pushes_;
  if (pushes_ <= staleness_) return false;
  // The oldest in the ring: S pushes before this one (the slot this push will reuse next).
  InFlight& due = ring_[pushes_ % ring_.size()];
  due.done.get();
  sum->swap(due.values);
  return true;
}

}  // namespace parasol::apps::gnn
