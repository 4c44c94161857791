#include "parasol/sched/goodput_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <vector>

#include <fmt/format.h>

#include "parasol/sched/simulator.h"
#include "parasol/sched/testing.h"
#include "parasol/sched/tiresias.h"

namespace parasol::sched {
namespace {

// The goodput policy with 6 long jobs on 2 x 4 GPUs: every job finishes, allocations never
// exceed a node (the simulator throws if they do) and no node hosts two distributed jobs; the
// jobs use the GPUs that 1-GPU requests leave idle, so they finish sooner on average than under
// Tiresias with those requests.
TEST_F(SchedTest, GoodputPolicyKeepsTheRulesAndUsesIdleGpus) {
  ApplicationSet apps(root_.string());
  std::vector<WorkloadJob> w;
  for (int i = 0; i < 6; ++i) w.push_back({fmt::format("j{}", i), 0, "big", 1, 32});
  SimOptions o;
  o.cluster = {2, 4};
  o.adaptive_batch = true;
  GoodputPolicy goodput;
  SimResult g = SimulateCluster(w, apps, goodput, o);
  EXPECT_EQ(g.distributed_rule_broken, 0);
  int restarted = 0;
  for (const JobResult& j : g.jobs) restarted += j.restarts > 0;
  EXPECT_GT(restarted, 0);  // some job was resized
  o.adaptive_batch = false;
  TiresiasPolicy tiresias;
  SimResult t = SimulateCluster(w, apps, tiresias, o);
  std::cout << "average JCT: goodput " << g.average_jct << " s, tiresias " << t.average_jct << " s\n";
  EXPECT_LT(g.average_jct, t.average_jct);
}

}  // namespace
}  // namespace parasol::sched
