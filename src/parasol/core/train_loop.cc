#include "parasol/core/train_loop.h"

#include "parasol/core/divergence_guard.h"

namespace parasol {

TrainLoopResult RunTrainLoop(const TrainLoopOptions& o, const TrainLoopHooks& h) {
  TrainLoopResult r{.steps_done = o.first_step};
  DivergenceGuard guard("loss", "step", o.divergence_hint);
  while (!h.finished(r.steps_done)) {
    h.step(r.steps_done);
    const int64_t done = ++r.steps_done;
    const bool last = h.finished(done);
    const bool evaluated = o.evaluate && h.evaluate && (last || (h.epoch_end && h.epoch_end(done)));
    if (evaluated) h.evaluate(done);
    if (h.report) h.report(done, evaluated);
    if (h.loss) guard.Check(done, h.loss(done));
    const bool due = o.checkpoint_every > 0 && done % o.checkpoint_every == 0;
    const bool checkpointed = o.checkpoints && h.checkpoint && (due || last);
    if (checkpointed) h.checkpoint(done);
    if (last) break;
    if (h.stop_requested && h.stop_requested(done)) {
      if (o.checkpoints && !checkpointed && h.checkpoint) h.checkpoint(done);
      r.stopped = true;
      break;
    }
  }
  return r;
}

}  // namespace parasol
