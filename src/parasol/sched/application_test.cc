#include "parasol/sched/application.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/sched/testing.h"

namespace parasol::sched {
namespace {

TEST_F(SchedTest, ProfilesInterpolate) {
  Application a = Application::Load((root_ / "toy").string());
  EXPECT_EQ(a.name(), "toy");
  EXPECT_EQ(a.init_batch_size(), 32);
  EXPECT_EQ(a.max_batch_size(), 64);
  EXPECT_EQ(a.max_epochs(), 3);
  EXPECT_DOUBLE_EQ(a.Throughput({1}, 48).step, 0.15);                      // between the measured batches
  EXPECT_DOUBLE_EQ(a.Throughput({2}, 32).sync, 0.03);                      // measured placement
  EXPECT_DOUBLE_EQ(a.Throughput({1, 1, 1, 1, 1, 1, 1, 1}, 32).step, 0.3);  // 8 nodes x 1: large-scale row
  EXPECT_DOUBLE_EQ(a.Throughput({2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 32).step,
                   0.5);  // 12 nodes x 2: nearest nodes (8), replicas beyond 16
  EXPECT_DOUBLE_EQ(a.Progress(2), 200);
  auto [sqr, var] = a.GradStats(48, 0);
  EXPECT_DOUBLE_EQ(sqr, 1.5);
  EXPECT_DOUBLE_EQ(var, 2.5);
}

TEST_F(SchedTest, AMalformedProfileNamesTheLine) {
  Write("toy/scalability.csv",
        "num_nodes,num_replicas,local_bsz,step_time,sync_time\n8,8,32,0.3,0.2\n8,x,32,0.5,0.4\n");
  EXPECT_THAT([&] { Application::Load((root_ / "toy").string()); },
              ::testing::ThrowsMessage<ParseError>(
                  ::testing::HasSubstr("scalability.csv:3: column 2 'x' is not a finite number")));
}

}  // namespace
}  // namespace parasol::sched
