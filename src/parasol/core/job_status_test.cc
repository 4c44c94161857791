// The status file between a training run and a scheduler: what the run writes the scheduler reads
// back; a file a run did not write whole, or with a value out of range, is an error naming the
// file and line.
#include "parasol/core/job_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol {
namespace {

using ::testing::HasSubstr;

class JobStatusTest : public ::testing::Test {
 protected:
  void TearDown() override { std::remove(path_.c_str()); }
  std::string Error(const std::string& text) {
    std::ofstream(path_) << text;
    try {
      ReadJobStatus(path_);
    } catch (const ParseError& e) {
      return e.what();
    }
    return "";
  }
  const std::string path_ = TestPath("status");
};

TEST_F(JobStatusTest, WhatARunWritesTheSchedulerReads) {
  const JobStatus s{.step = 120,
                    .total_steps = 600,
                    .progress = 133.5,
                    .ranks = 4,
                    .batch_per_rank = 16,
                    .step_seconds = 0.125,
                    .sync_seconds = 0.03125,
                    .grad_measured = true,
                    .grad_sqr = 2.5e-3,
                    .grad_var = 0.75,
                    .state = "running"};
  WriteJobStatus(path_, s);
  const JobStatus r = ReadJobStatus(path_);
  EXPECT_EQ(r.step, 120);
  EXPECT_EQ(r.total_steps, 600);
  EXPECT_EQ(r.progress, 133.5);
  EXPECT_EQ(r.ranks, 4);
  EXPECT_EQ(r.batch_per_rank, 16);
  EXPECT_EQ(r.step_seconds, 0.125);
  EXPECT_EQ(r.sync_seconds, 0.03125);
  EXPECT_TRUE(r.grad_measured);
  EXPECT_EQ(r.grad_sqr, 2.5e-3);
  EXPECT_EQ(r.grad_var, 0.75);
  EXPECT_EQ(r.state, "running");

  WriteJobStatus(path_, {.step = 3, .total_steps = 10, .ranks = 1, .state = "done"});
  EXPECT_FALSE(ReadJobStatus(path_).grad_measured) << "no noise measured: none written";
}

TEST_F(JobStatusTest, AnIncompleteOrOutOfRangeFileNamesTheFileAndLine) {
  EXPECT_THAT(Error("step 3\ntotal_steps 10\nranks 1\n"), HasSubstr(path_ + ": no 'state' line"));
  EXPECT_THAT(Error("step 3\ntotal_steps 10\nranks 0\nstate running\n"), HasSubstr(path_ + ":3: ranks 0"));
  EXPECT_THAT(Error("step -1\ntotal_steps 10\nranks 1\nstate running\n"), HasSubstr(path_ + ":1: step -1"));
  EXPECT_THAT(Error("step 3\ntotal_steps 10\nranks 1\ngrad_sqr 1\nstate running\n"),
              HasSubstr("no 'grad_var' line"));
}

}  // namespace
}  // namespace parasol
