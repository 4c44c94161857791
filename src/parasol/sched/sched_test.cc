// The simulator's pieces against hand-computed cases: profile interpolation, a job's progress,
// and Tiresias's queues on a three-job workload.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/sched/goodput_policy.h"
#include "parasol/sched/optimus.h"
#include "parasol/sched/simulator.h"
#include "parasol/sched/tiresias.h"

namespace parasol::sched {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

// A made-up application "toy": 1-GPU step time 0.1 s at 32 per GPU and 0.2 s at 64 (sync 0.01
// and 0.02); 2 GPUs on one node 0.12 s / 0.22 s; large-scale: 8 nodes x 8 GPUs 0.3 s at 32. Two
// validation files (batch 32 and 64), 3 epochs of 100 progress each.
class SchedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("sched_test_{}", ::getpid());
    fs::create_directories(root_ / "toy");
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
    fs::create_directories(root_ / "big");
    for (const char* f : {"placements.csv", "scalability.csv"})
      fs::copy_file(root_ / "toy" / f, root_ / "big" / f);
    Write("big/validation-32.csv",
          "progress,iteration,metric,grad_sqr,grad_var\n10000,10000,0.5,1.0,9.0\n20000,20000,0.6,1.0,9."
          "0\n30000,30000,0.7,1.0,9.0\n");
    Write("big/validation-64.csv",
          "progress,iteration,metric,grad_sqr,grad_var\n10000,6000,0.5,1.0,9.0\n20000,12000,0.6,1.0,9."
          "0\n30000,18000,0.7,1.0,9.0\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& name, const std::string& text) { std::ofstream(root_ / name) << text; }
  fs::path root_;
};

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

TEST_F(SchedTest, MalformedProfilesAndWorkloadsNameTheLine) {
  Write("toy/scalability.csv",
        "num_nodes,num_replicas,local_bsz,step_time,sync_time\n8,8,32,0.3,0.2\n8,x,32,0.5,0.4\n");
  try {
    Application::Load((root_ / "toy").string());
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("scalability.csv:3: column 2 'x' is not a finite number"));
  }
  Write("w.csv", "name,time,application,num_replicas,batch_size\na,0,toy,1,32\nb,10,toy,two,32\n");
  try {
    ReadWorkload((root_ / "w.csv").string());
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("w.csv:3: num_replicas 'two'"));
  }
}

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

// Tiresias on 4 GPUs with a 600 GPU-second threshold: A (4 GPUs) and B (2) and C (1) arrive
// together. A runs first; B and C wait. Once A has 600 GPU-seconds it drops to the second queue,
// B and C run, and A (needing 4) waits behind them.
TEST_F(SchedTest, TiresiasServesTheFirstQueueFirstAndDemotes) {
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
