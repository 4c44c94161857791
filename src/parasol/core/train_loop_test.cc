// The loop's schedule, with hooks that write down what they are asked to do: steps from a resumed
// run's first, evaluations after each epoch and the last step, checkpoints every N steps and after
// the last (once), a stop request honoured between steps with a checkpoint of the step it stops at.
#include "parasol/core/train_loop.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol {
namespace {

using ::testing::ElementsAre;

// A run of `total` steps, epochs of `per_epoch` steps, stopping when asked after `stop_at` steps.
struct Recorder {
  int64_t total = 10, per_epoch = 4, stop_at = -1;
  std::vector<std::string> calls;

  TrainLoopHooks Hooks() {
    return {.finished = [this](int64_t done) { return done >= total; },
            .step = [this](int64_t step) { calls.push_back("step " + std::to_string(step)); },
            .epoch_end = [this](int64_t done) { return done % per_epoch == 0; },
            .evaluate = [this](int64_t done) { calls.push_back("evaluate " + std::to_string(done)); },
            .report = [this](int64_t, bool) {},
            .checkpoint = [this](int64_t done) { calls.push_back("checkpoint " + std::to_string(done)); },
            .stop_requested = [this](int64_t done) { return done == stop_at; }};
  }
};

TEST(TrainLoop, EvaluatesAfterEachEpochAndTheLastStepAndCheckpointsEveryNAndAtTheEndOnce) {
  Recorder r;
  const TrainLoopResult result = RunTrainLoop({.checkpoints = true, .checkpoint_every = 5}, r.Hooks());
  EXPECT_EQ(result.steps_done, 10);
  EXPECT_FALSE(result.stopped);
  EXPECT_THAT(r.calls, ElementsAre("step 0", "step 1", "step 2", "step 3", "evaluate 4", "step 4",
                                   "checkpoint 5", "step 5", "step 6", "step 7", "evaluate 8", "step 8",
                                   "step 9", "evaluate 10", "checkpoint 10"));
}

TEST(TrainLoop, AResumedRunTakesTheRemainingStepsAndOneAtItsEndTakesNone) {
  Recorder r;
  r.total = 6;
  const TrainLoopResult result = RunTrainLoop({.first_step = 4, .checkpoints = true}, r.Hooks());
  EXPECT_EQ(result.steps_done, 6);
  EXPECT_THAT(r.calls, ElementsAre("step 4", "step 5", "evaluate 6", "checkpoint 6"));

  Recorder done;
  done.total = 6;
  EXPECT_EQ(RunTrainLoop({.first_step = 6, .checkpoints = true}, done.Hooks()).steps_done, 6);
  EXPECT_TRUE(done.calls.empty());
}

TEST(TrainLoop, AStopRequestEndsTheRunWithACheckpointOfItsStep) {
  Recorder r;
  r.stop_at = 3;
  const TrainLoopResult result = RunTrainLoop({.checkpoints = true}, r.Hooks());
  EXPECT_TRUE(result.stopped);
  EXPECT_EQ(result.steps_done, 3);
  EXPECT_THAT(r.calls, ElementsAre("step 0", "step 1", "step 2", "checkpoint 3"));

  Recorder due;  // the schedule's checkpoint of that step is not written twice
  due.stop_at = 5;
  RunTrainLoop({.checkpoints = true, .checkpoint_every = 5}, due.Hooks());
  EXPECT_EQ(std::count(due.calls.begin(), due.calls.end(), "checkpoint 5"), 1);
  EXPECT_EQ(due.calls.back(), "checkpoint 5");
}

TEST(TrainLoop, WithoutCheckpointsOrEvaluationNoneIsAsked) {
  Recorder r;
  r.total = 3;
  RunTrainLoop({.checkpoints = false, .checkpoint_every = 1, .evaluate = false}, r.Hooks());
  EXPECT_THAT(r.calls, ElementsAre("step 0", "step 1", "step 2"));

  Recorder stopped;
  stopped.stop_at = 2;
  EXPECT_TRUE(RunTrainLoop({.checkpoints = false}, stopped.Hooks()).stopped);
  EXPECT_THAT(stopped.calls, ElementsAre("step 0", "step 1"));
}

TEST(TrainLoop, ANaNLossEndsTheRunAfterItsReportAndBeforeItsCheckpoint) {
  Recorder r;
  TrainLoopHooks hooks = r.Hooks();
  hooks.report = [&](int64_t done, bool) { r.calls.push_back("report " + std::to_string(done)); };
  hooks.loss = [](int64_t done) { return done < 3 ? 2.3 / static_cast<double>(done) : std::nan(""); };
  try {
    RunTrainLoop({.checkpoints = true, .checkpoint_every = 2, .divergence_hint = "lower --lr"}, hooks);
    FAIL() << "a NaN loss did not end the run";
  } catch (const DivergedError& e) {
    EXPECT_STREQ(e.what(), "loss nan at step 3: the run diverged; lower --lr");
  }
  EXPECT_THAT(r.calls,
              ElementsAre("step 0", "report 1", "step 1", "report 2", "checkpoint 2", "step 2", "report 3"));
}

}  // namespace
}  // namespace parasol
