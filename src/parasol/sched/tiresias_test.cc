#include "parasol/sched/tiresias.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "parasol/sched/sim_job.h"

namespace parasol::sched {
namespace {

using ::testing::ElementsAre;

// Tiresias on 4 GPUs with a 600 GPU-second threshold: A (4 GPUs) and B (2) and C (1) arrive
// together. A runs first; B and C wait. Once A has 600 GPU-seconds it drops to the second queue,
// B and C run, and A (needing 4) waits behind them.
TEST(Tiresias, ServesTheFirstQueueFirstAndDemotes) {
  SimJob a("A", nullptr, 0, 4, 32), b("B", nullptr, 0, 2, 32), c("C", nullptr, 0, 1, 32);
  std::vector<const Job*> active{&a, &b, &c};
  TiresiasPolicy t(600);
  ClusterSpec one{1, 4};
  Allocations alloc = t.Optimize(60, active, {}, one);
  EXPECT_THAT(alloc["A"], ElementsAre(0, 0, 0, 0));
  EXPECT_FALSE(alloc.contains("B"));
  alloc = t.Optimize(120, active, alloc, one);  // 60 s x 4 GPUs: still in the first queue
  EXPECT_EQ(alloc["A"].size(), 4u);
  alloc = t.Optimize(240, active, alloc, one);  // 180 s x 4 = 720 GPU-s: demoted
  EXPECT_FALSE(alloc.contains("A"));
  EXPECT_THAT(alloc["B"], ElementsAre(0, 0));
  EXPECT_THAT(alloc["C"], ElementsAre(0));
  // Packing: on 2 nodes, a 3-GPU job goes to the node with most free GPUs.
  SimJob d("D", nullptr, 0, 3, 32), e("E", nullptr, 0, 3, 32);
  TiresiasPolicy t2;
  alloc = t2.Optimize(60, {&d, &e}, {}, ClusterSpec{2, 4});
  EXPECT_THAT(alloc["D"], ElementsAre(0, 0, 0));
  EXPECT_THAT(alloc["E"], ElementsAre(1, 1, 1));
  EXPECT_THAT(PlacementOf({0, 0, 1, 1, 1, 2}), ElementsAre(2, 3, 1));
}

}  // namespace
}  // namespace parasol::sched
