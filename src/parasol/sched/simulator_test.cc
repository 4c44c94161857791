// The simulator against hand-computed cases: a job's progress by its profile, the workload's errors.
#include "parasol/sched/simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "parasol/core/error.h"
#include "parasol/sched/testing.h"
#include "parasol/sched/tiresias.h"

namespace parasol::sched {
namespace {

// One job alone: it starts at the first interval (60 s), loses the 30 s restart, then runs 3
// epochs of 100 progress at 1 GPU, batch 32 (gain 1): 0.1 s per unit of progress, 30 s in all.
TEST_F(SchedTest, AJobAloneFinishesWhenItsProfileSays) {
  ApplicationSet apps(root_.string());
  TiresiasPolicy tiresias;
  SimOptions o;
  o.cluster = {1, 4};
  SimResult r = SimulateCluster({{"a", 0, "toy", 1, 32}}, apps, tiresias, o);
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_time, 60 + 30 + 3 * 100 * 0.1);
  // Batch 64 on 1 GPU accumulates two steps of 32 per update: 0.1 + (0.1 - 0.01) s, and gains
  // (var + sqr) / (var / 2 + sqr) = 4/3 progress with batch 64's statistics.
  SimResult r64 = SimulateCluster({{"b", 0, "toy", 1, 64}}, apps, tiresias, o);
  EXPECT_NEAR(r64.jobs[0].completion_time, 60 + 30 + 3 * std::round(100 / ((4.0 / 3) / 0.19)), 1e-9);
}

TEST_F(SchedTest, AMalformedWorkloadNamesTheLine) {
  Write("w.csv", "name,time,application,num_replicas,batch_size\na,0,toy,1,32\nb,10,toy,two,32\n");
  EXPECT_THAT([&] { ReadWorkload((root_ / "w.csv").string()); },
              ::testing::ThrowsMessage<ParseError>(::testing::HasSubstr("w.csv:3: num_replicas 'two'")));
}

}  // namespace
}  // namespace parasol::sched
