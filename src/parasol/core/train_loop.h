// The one training loop of parasol's trainers (dl's Train, TrainLm and TrainDynamic, the GNN's):
// steps until the trainer's end, an evaluation after each epoch's last step and after the run's
// last, a report (metrics row, log line) after every step, checkpoints every N steps and after
// the last, and a scheduler's requests between steps. What a step, an evaluation, a report and a
// checkpoint are is the trainer's; when they happen is the loop's, so every command means the
// same by --checkpoint-every, --metrics and a stop file, and a resumed run takes the steps the
// uninterrupted one would have taken.
//
// Threading: one thread per rank runs the loop; every rank runs the same steps, and the hooks'
// collectives (evaluation sums, checkpoints, a stop request) meet because the decisions they
// follow are the same on every rank.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace parasol {

struct TrainLoopOptions {
  int64_t first_step = 0;        // steps done before this run (a resumed run's)
  bool checkpoints = false;      // --checkpoint was given
  int64_t checkpoint_every = 0;  // steps between checkpoints; 0: only after the last step
  bool evaluate = true;
  std::string divergence_hint = "lower --lr";  // the options a diverged run's error points at
};

struct TrainLoopHooks {
  // Whether the run is over after `steps_done` steps (also asked before the first step, so a run
  // resumed at its end takes none). Required.
  std::function<bool(int64_t steps_done)> finished;
  // Takes step `step` (from 0). Required.
  std::function<void(int64_t step)> step;
  // Whether the step just taken ended an epoch. None: only the last step is followed by an
  // evaluation.
  std::function<bool(int64_t steps_done)> epoch_end;
  std::function<void(int64_t steps_done)> evaluate;
  // After each step and its evaluation, if any.
  std::function<void(int64_t steps_done, bool evaluated)> report;
  // The step's training loss, the same on every rank. Given, a non-finite loss or one that ran
  // away from the first (core/divergence_guard.h) ends the run after its report and before its
  // checkpoint, with a DivergedError: the metrics keep the step, the last checkpoint the good state.
  std::function<double(int64_t steps_done)> loss;
  std::function<void(int64_t steps_done)> checkpoint;
  // Between steps (not after the last): a scheduler's requests. True ends the run here, after a
  // checkpoint of this step with checkpoints on (written now if the schedule did not just).
  std::function<bool(int64_t steps_done)> stop_requested;
};

struct TrainLoopResult {
  int64_t steps_done = 0;
  bool stopped = false;  // stop_requested ended the run before finished() did
};

TrainLoopResult RunTrainLoop(const TrainLoopOptions& options, const TrainLoopHooks& hooks);

}  // namespace parasol
