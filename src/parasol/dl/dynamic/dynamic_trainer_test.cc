// Data parallelism over dynamic networks against one rank with the combined batch, and the
// trainer's checkpoints.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"
#include "parasol/dl/dynamic/dynamic_trainer.h"

namespace parasol::dl::dynamic {
namespace {

using ::testing::HasSubstr;

std::string DataDir() {
  const char* d = std::getenv("PARASOL_DATA");
  return std::string(d ? d : "data") + "/sst";
}

// Two ranks, each with half of every global batch, take the steps one rank takes with the whole.
TEST(DynamicTrainer, TwoRanksTakeOneRanksStepsWithTheCombinedBatch) {
  std::ifstream in(DataDir() + "/train.txt");
  std::string text, line;
  for (int i = 0; i < 64 && std::getline(in, line); ++i) text += line + "\n";
  const TestDir data("sst64");
  const std::string dir = data.string();
  std::ofstream(data / "train.txt") << text;
  DynamicTrainOptions o{.model = "tree-lstm",
                        .data = dir,
                        .embedding = 8,
                        .hidden = 6,
                        .dropout = 0,
                        .steps = 4,
                        .evaluate = false};
  o.optimizer = {.kind = OptimizerKind::kSgd, .lr = 0.5, .momentum = 0.9};
  const auto train = [&](int ranks, int64_t batch) {
    o.batch = batch;
    torch::Tensor params;
    comm::InProcessWorld world(ranks);
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      torch::set_num_threads(1);
      DynamicResult r = TrainDynamic(ctx, o);
      if (ctx.rank() == 0) params = r.parameters;
    }));
    return params;
  };
  const torch::Tensor one = train(1, 16), two = train(2, 8);
  EXPECT_FALSE(torch::equal(one, train(1, 8)));  // the batch matters, so the comparison does
  EXPECT_TRUE(torch::allclose(one, two, 1e-4, 1e-6))
      << "largest difference " << (one - two).abs().max().item<double>();
}

TEST(DynamicTrainer, OnlyAfterBackwardSynchronisesDynamicNetworks) {
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    TrainDynamic(ctx,
                 {.model = "tree-fc", .tree_count = 8, .tree_depth = 3, .sync = {.mode = SyncMode::kWfbp}});
  });
  EXPECT_THAT(comm::testing::Message(errors[0]), HasSubstr("--sync after-backward only"));
}

// A checkpoint that cannot be written (a failed write, a full disk, a crash half-way through the
// rank's state file) ends the run with an error naming the file and leaves the previous
// checkpoint, from which a resumed run takes only the remaining steps.
TEST(DynamicTrainer, AFailedCheckpointLeavesThePreviousOne) {
  const TestDir ckpt("dynamic_faulty");
  const std::string dir = ckpt.string();
  DynamicTrainOptions o{.model = "tree-fc",
                        .batch = 4,
                        .steps = 2,
                        .tree_count = 32,
                        .tree_depth = 3,
                        .evaluate = false,
                        .checkpoint_dir = dir};
  comm::InProcessWorld one(1);
  comm::testing::ExpectNoErrors(
      comm::testing::RunRanks(one, [&](comm::Context& ctx) { TrainDynamic(ctx, o); }));
  DynamicTrainOptions more = o;
  more.resume_dir = dir;
  more.steps = 4;
  DynamicTrainOptions resume = more;
  resume.checkpoint_dir.clear();
  comm::testing::ForEachCheckpointFault(
      "rank-0.step-4.bin", 100, [&](comm::Context& ctx) { TrainDynamic(ctx, more); },
      [&] {
        size_t steps = 0;
        comm::testing::ExpectNoErrors(comm::testing::RunRanks(
            one, [&](comm::Context& ctx) { steps = TrainDynamic(ctx, resume).step_seconds.size(); }));
        EXPECT_EQ(steps, 2u) << "resumed at step 2, the previous checkpoint";
      });
}

}  // namespace
}  // namespace parasol::dl::dynamic
