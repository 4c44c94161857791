// JobControl's contract with a scheduler, on two ranks as threads: what rank 0 finds in the stop
// and batch files every rank learns at the same step; a malformed batch file is an error on every
// rank; the status file says what the run has done; with no paths, nothing is touched.
#include "parasol/dl/job_control.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/job_status.h"
#include "parasol/core/test_dir.h"

namespace parasol::dl {
namespace {

namespace fs = std::filesystem;
using comm::InProcessWorld;
using comm::testing::ExpectNoErrors;
using comm::testing::RunRanks;
using ::testing::HasSubstr;

class JobControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = {.status = (dir_ / "status").string(),
              .stop = (dir_ / "stop").string(),
              .batch = (dir_ / "batch").string()};
  }
  void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

  TestDir dir_{"job_control"};
  JobControlPaths paths_;
};

TEST_F(JobControlTest, EveryRankLearnsWhatRankZeroFindsAtTheSameCheck) {
  InProcessWorld world(2);
  std::vector<JobControl::Request> before(2), stop(2), batch(2), same(2);
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    JobControl control(ctx, paths_, 100, 16);
    const size_t r = static_cast<size_t>(ctx.rank());
    before[r] = control.Check(64);
    if (ctx.rank() == 0) WriteFile(paths_.batch, "32\n");
    batch[r] = control.Check(64);  // rank 1 has no file to look at: it hears rank 0's
    control.SetBatchPerRank(32);
    if (ctx.rank() == 0) WriteFile(paths_.batch, "32\n");
    same[r] = control.Check(64);
    if (ctx.rank() == 0) WriteFile(paths_.stop, "");
    stop[r] = control.Check(64);
  }));
  for (int r = 0; r < 2; ++r) {
    EXPECT_FALSE(before[r].stop);
    EXPECT_EQ(before[r].batch_per_rank, 0);
    EXPECT_EQ(batch[r].batch_per_rank, 32) << "rank " << r;
    EXPECT_FALSE(batch[r].stop);
    EXPECT_EQ(same[r].batch_per_rank, 0) << "the batch it already has is no change";
    EXPECT_TRUE(stop[r].stop) << "rank " << r;
  }
  EXPECT_FALSE(fs::exists(paths_.batch)) << "a batch file is removed once read";
  EXPECT_TRUE(fs::exists(paths_.stop)) << "the stop file is the scheduler's to remove";
}

TEST_F(JobControlTest, AMalformedBatchFileIsAnErrorOnEveryRank) {
  for (const char* text : {"lots\n", "0\n", "65\n"}) {
    WriteFile(paths_.batch, text);
    InProcessWorld world(2);
    std::vector<std::exception_ptr> errors = RunRanks(world, [&](comm::Context& ctx) {
      JobControl control(ctx, paths_, 100, 16);
      control.Check(64);
    });
    ASSERT_TRUE(errors[0] && errors[1]) << text;
    EXPECT_THAT(comm::testing::Message(errors[0]), HasSubstr(paths_.batch + ":1: batch per rank")) << text;
    EXPECT_THAT(comm::testing::Message(errors[1]), HasSubstr("refused by rank 0")) << text;
  }
}

TEST_F(JobControlTest, TheStatusFileSaysWhatTheRunHasDone) {
  InProcessWorld world(2);
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    JobControl control(ctx, paths_, 100, 16);
    NoiseScale noise(32);
    for (int64_t step = 1; step <= 5; ++step)
      control.Record(step, static_cast<double>(step), 0.5, 0.125, noise);
    if (ctx.rank() == 0) {
      const JobStatus running = ReadJobStatus(paths_.status);  // the first record is written at once
      EXPECT_EQ(running.state, "running");
      EXPECT_EQ(running.total_steps, 100);
      EXPECT_EQ(running.ranks, 2);
      EXPECT_EQ(running.batch_per_rank, 16);
      EXPECT_FALSE(running.grad_measured);
    }
    control.Finish(5, 5.0, /*stopped=*/false);
  }));
  const JobStatus done = ReadJobStatus(paths_.status);
  EXPECT_EQ(done.state, "done");
  EXPECT_EQ(done.step, 5);
  EXPECT_EQ(done.progress, 5.0);
  EXPECT_EQ(done.step_seconds, 0.5) << "the median of the steps after the two warm-up steps";
  EXPECT_EQ(done.sync_seconds, 0.125);
}

TEST_F(JobControlTest, AStoppedRunOfStepsSaysWhereItStoppedAndAFinishedOneSaysNothing) {
  InProcessWorld world(1);
  std::ostringstream stopped, finished, uncheckpointed;
  ExpectNoErrors(RunRanks(world, [&](comm::Context& ctx) {
    JobControl control(ctx, paths_, 40, 16);
    control.Record(1, 1.0, 0.5, 0.0, NoiseScale(16));
    control.Finish({.steps_done = 1, .stopped = true}, &stopped, /*checkpointed=*/true);
    EXPECT_EQ(ReadJobStatus(paths_.status).state, "stopped");
    control.Finish({.steps_done = 3, .stopped = true}, &uncheckpointed, /*checkpointed=*/false);
    control.Finish({.steps_done = 40, .stopped = false}, &finished, /*checkpointed=*/true);
    control.Finish({.steps_done = 40, .stopped = false}, nullptr, true);
  }));
  EXPECT_EQ(stopped.str(), "stopped at step 1 of 40 (checkpoint written)\n");
  EXPECT_EQ(uncheckpointed.str(), "stopped at step 3 of 40\n");
  EXPECT_EQ(finished.str(), "");
  const JobStatus done = ReadJobStatus(paths_.status);
  EXPECT_EQ(done.state, "done");
  EXPECT_EQ(done.step, 40);
}

TEST_F(JobControlTest, WithoutPathsNothingIsTouchedAndNoCollectiveRuns) {
  InProcessWorld world(2);
  // Rank 1 never calls Check: were it collective, rank 0 would wait for it and time out.
  ExpectNoErrors(RunRanks(world,
                          [&](comm::Context& ctx) {
                            JobControl control(ctx, {}, 100, 16);
                            if (ctx.rank() == 0) {
                              EXPECT_FALSE(control.Check(64).stop);
                              control.Record(1, 1.0, 0.5, 0.1, NoiseScale(32));
                              control.Finish(1, 1.0, true);
                            }
                          },
                          {.timeout_ms = std::chrono::milliseconds(2000)}));
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace parasol::dl
