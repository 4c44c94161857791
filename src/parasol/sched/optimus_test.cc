#include "parasol/sched/optimus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/sched/application.h"
#include "parasol/sched/sim_job.h"
#include "parasol/sched/testing.h"

namespace parasol::sched {
namespace {

using ::testing::ElementsAre;

// Optimus on 2 nodes x 2 GPUs: each job gets one GPU; the last goes where one more GPU saves the
// most time (step time 0.19 s -> 0.12 s for the batch-64 jobs, times the iterations left; the
// batch-32 job cannot use two); ties go to the earlier job. Packing: smallest jobs first, onto
// the node with the most free GPUs.
TEST_F(SchedTest, OptimusGivesGpusByMarginalGainOnRemainingWork) {
  Application toy = Application::Load((root_ / "toy").string());
  SimJob j1("J1", &toy, 0, 1, 32), j2("J2", &toy, 0, 1, 64), j3("J3", &toy, 0, 1, 64);
  EXPECT_NEAR(OptimusPolicy::PredictStepTime(j2, 1, 2), 0.19, 1e-12);
  EXPECT_NEAR(OptimusPolicy::PredictStepTime(j2, 2, 2), 0.12, 1e-12);
  EXPECT_EQ(OptimusPolicy::MaxReplicas(j1), 1);
  OptimusPolicy optimus;
  Allocations alloc = optimus.Optimize(60, {&j1, &j2, &j3}, {}, ClusterSpec{2, 2});
  EXPECT_THAT(alloc["J1"], ElementsAre(0));
  EXPECT_THAT(alloc["J3"], ElementsAre(1));
  EXPECT_THAT(alloc["J2"], ElementsAre(0, 1));
  // With J1 gone, J3 keeps its GPU (same count) and J2 keeps two; the freed GPU goes to J3,
  // whose count then changes, so it is placed anew.
  alloc.erase("J1");
  alloc = optimus.Optimize(120, {&j2, &j3}, alloc, ClusterSpec{2, 2});
  EXPECT_EQ(alloc["J2"].size(), 2u);
  EXPECT_EQ(alloc["J3"].size(), 2u);
}

}  // namespace
}  // namespace parasol::sched
