// For the scheduler's tests: a folder of made-up application profiles, written before each test.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "parasol/core/test_dir.h"

namespace parasol::sched {

// A made-up application "toy": 1-GPU step time 0.1 s at 32 per GPU and 0.2 s at 64 (sync 0.01
// and 0.02); 2 GPUs on one node 0.12 s / 0.22 s; large-scale: 8 nodes x 8 GPUs 0.3 s at 32. Two
// validation files (batch 32 and 64), 3 epochs of 100 progress each.
class SchedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(root_ / "toy");
    Write("toy/placements.csv",
          "placement,local_bsz,step_time,sync_time\n1,32,0.1,0.01\n1,64,0.2,0.02\n2,32,0.12,0.03\n2,64,0.22,"
          "0.04\n");
    Write("toy/scalability.csv",
          "num_nodes,num_replicas,local_bsz,step_time,sync_time\n8,8,32,0.3,0.2\n8,16,32,0.5,0.4\n");
    const char* validation =
        "progress,iteration,metric,grad_sqr,grad_var\n100,100,0.5,1.0,3.0\n200,200,0.6,1.0,3.0\n300,300,0.7,"
        "1.0,3.0\n";
    Write("toy/validation-32.csv", validation);
    Write("toy/validation-64.csv",
          "progress,iteration,metric,grad_sqr,grad_var\n100,60,0.5,2.0,2.0\n200,120,0.6,2.0,2.0\n300,180,0.7,"
          "2.0,2.0\n");
    // "big": the same machine profile, 100 times the work per epoch, and noisier gradients.
    std::filesystem::create_directories(root_ / "big");
    for (const char* f : {"placements.csv", "scalability.csv"})
      std::filesystem::copy_file(root_ / "toy" / f, root_ / "big" / f);
    Write("big/validation-32.csv",
          "progress,iteration,metric,grad_sqr,grad_var\n10000,10000,0.5,1.0,9.0\n20000,20000,0.6,1.0,9."
          "0\n30000,30000,0.7,1.0,9.0\n");
    Write("big/validation-64.csv",
          "progress,iteration,metric,grad_sqr,grad_var\n10000,6000,0.5,1.0,9.0\n20000,12000,0.6,1.0,9."
          "0\n30000,18000,0.7,1.0,9.0\n");
  }
  void Write(const std::string& name, const std::string& text) { std::ofstream(root_ / name) << text; }
  TestDir root_{"sched"};
};

}  // namespace parasol::sched
