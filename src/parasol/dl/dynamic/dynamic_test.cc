// The dynamic-network engine: schedules, batched execution against one vertex at a time, the
// gradient against finite differences, data parallelism against one rank with the combined batch,
// the readers' errors.
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
#include "parasol/core/faulty_file_system.h"
#include "parasol/dl/dynamic/dynamic_data.h"
#include "parasol/dl/dynamic/dynamic_net.h"
#include "parasol/dl/dynamic/dynamic_trainer.h"
#include "parasol/dl/dynamic/schedule.h"
#include "parasol/dl/dynamic/sst_treebank.h"

namespace parasol::dl::dynamic {
namespace {

using ::testing::HasSubstr;

std::string DataDir() {
  const char* d = std::getenv("PARASOL_DATA");
  return std::string(d ? d : "data") + "/sst";
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// "(1 (2 a) (3 (2 b) (4 c)))": leaves a, b, c; (b c) at height 1, the root at height 2.
TEST(Schedule, LevelsGroupVerticesByHeightAcrossGraphs) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  const std::string path = WriteTemp("sched.txt", "(1 (2 a) (3 (2 b) (4 c)))\n(0 (1 a) (2 d))\n");
  const Treebank t = ReadTreebank(path, vocab, true);
  ASSERT_EQ(t.trees.size(), 2u);
  EXPECT_EQ(t.sentences[0], "a b c");
  const std::vector<const ExampleGraph*> batch = {&t.trees[0], &t.trees[1]};
  const Schedule s = MakeSchedule(batch, Batching::kBatched);
  EXPECT_EQ(s.vertices, 8);  // 5 + 3
  ASSERT_EQ(s.levels.size(), 3u);
  EXPECT_TRUE(s.levels[0].leaves);
  EXPECT_EQ(s.levels[0].rows.numel(), 5);  // a b c, a d
  EXPECT_EQ(s.levels[1].rows.numel(), 2);  // (b c), the second root
  EXPECT_EQ(s.levels[2].rows.numel(), 1);  // the first root
  EXPECT_EQ(s.input_rows.numel(), 5);
  EXPECT_EQ(s.roots[0].item<int64_t>(), 4);
  EXPECT_EQ(s.roots[1].item<int64_t>(), 7);
  // A leaf's absent children are the zero row.
  EXPECT_EQ(s.levels[0].children[0].item<int64_t>(), 8);
  EXPECT_EQ(MakeSchedule(batch, Batching::kPerNode).levels.size(), 8u);
}

TEST(Treebank, MalformedTreesNameFileAndLine) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  const auto fails = [&](const std::string& text, const std::string& what) {
    const std::string path = WriteTemp("bad_tree.txt", text);
    EXPECT_THAT([&] { ReadTreebank(path, vocab, true); },
                ::testing::ThrowsMessage<ParseError>(HasSubstr(what)))
        << text;
  };
  fails("(2 (2 a) (2 b))\n(2 (2 a) (2 b)\n", "bad_tree.txt:2: unbalanced brackets");
  fails("(7 (2 a) (2 b))\n", "bad_tree.txt:1: a node's label must be 0-4");
  fails("(2 (2 a) (2 b) (2 c))\n", "bad_tree.txt:1: a node has more than two children");
  fails("(2 (2 a) (2 b)))\n", "bad_tree.txt:1: text after the tree");
  fails("(2 a (2 b))\n", "bad_tree.txt:1: a node has both a word and children");
  fails("(2 ())\n", "bad_tree.txt:1: a node's label must be 0-4");
  fails("", "bad_tree.txt: no tree");
}

struct Pass {
  double loss = 0;
  std::vector<torch::Tensor> grads;
};

// One forward and backward of `net` over `graphs` (loss: summed cross-entropy over the labelled
// vertices), the parameters' gradients.
Pass ForwardBackward(DynamicNet& net, const std::vector<const ExampleGraph*>& graphs, Batching batching) {
  net->zero_grad();
  const Schedule s = MakeSchedule(graphs, batching);
  auto [logits, labels] = net->Forward(s);
  const torch::Tensor loss = torch::nn::functional::cross_entropy(
      logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  loss.backward();
  net->Backward();
  Pass r{.loss = loss.item<double>()};
  for (const torch::Tensor& p : net->parameters())
    r.grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return r;
}

// Batched by level, with and without the inputs' projection hoisted, and one vertex at a time give
// the same loss and gradients on 16 SST trees, for each cell.
TEST(LevelExecutor, BatchedAndPerNodeAgree) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  const Treebank t = ReadTreebank(DataDir() + "/dev.txt", vocab, true);
  std::vector<const ExampleGraph*> graphs;
  for (size_t i = 0; i < 16; ++i) graphs.push_back(&t.trees[i]);
  for (const char* cell : {"tree-lstm", "tree-fc"}) {
    torch::manual_seed(3);
    DynamicNet net(DynamicNetOptions{.cell = cell,
                                     .vocab = static_cast<int64_t>(vocab.size()),
                                     .embedding = 12,
                                     .hidden = 10,
                                     .dropout = 0});
    const Pass batched = ForwardBackward(net, graphs, Batching::kBatched);
    net->set_executor_options({.hoist_inputs = false});
    const Pass lazy_off = ForwardBackward(net, graphs, Batching::kBatched);
    const Pass per_node = ForwardBackward(net, graphs, Batching::kPerNode);
    EXPECT_NEAR(batched.loss, per_node.loss, 1e-4 * batched.loss) << cell;
    EXPECT_NEAR(batched.loss, lazy_off.loss, 1e-4 * batched.loss) << cell;
    for (size_t i = 0; i < batched.grads.size(); ++i) {
      EXPECT_TRUE(torch::allclose(batched.grads[i], per_node.grads[i], 1e-3, 1e-6))
          << cell << " parameter " << i;
      EXPECT_TRUE(torch::allclose(batched.grads[i], lazy_off.grads[i], 1e-3, 1e-6))
          << cell << " parameter " << i;
    }
  }
}

// Chains (the LSTM): batched by position against one vertex at a time.
TEST(LevelExecutor, ChainsBatchedAndPerNodeAgree) {
  const std::string path =
      WriteTemp("chains.txt", "a b c d\nb c\n\nd a b\nc c c c c\n" + std::string(60, 'x') + "\n");
  const DynamicData d = LoadTextChains(path);
  ASSERT_GE(d.train.size(), 3u);
  EXPECT_EQ(d.train[0].size(), 4u);  // a b c d: each predicts the next, d predicts the line's end
  std::vector<const ExampleGraph*> graphs;
  for (const ExampleGraph& g : d.train) graphs.push_back(&g);
  torch::manual_seed(4);
  DynamicNet net(DynamicNetOptions{
      .cell = "lstm-lm", .vocab = d.vocab, .embedding = 6, .hidden = 5, .classes = d.classes, .dropout = 0});
  const Pass batched = ForwardBackward(net, graphs, Batching::kBatched);
  const Pass per_node = ForwardBackward(net, graphs, Batching::kPerNode);
  EXPECT_NEAR(batched.loss, per_node.loss, 1e-5 * batched.loss);
  for (size_t i = 0; i < batched.grads.size(); ++i) {
    EXPECT_TRUE(torch::allclose(batched.grads[i], per_node.grads[i], 1e-3, 1e-6)) << "parameter " << i;
  }
}

// The Tree-LSTM's gradient on a tiny tree, in double precision, against central differences.
TEST(LevelExecutor, TreeLstmGradientMatchesFiniteDifferences) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  const Treebank t = ReadTreebank(WriteTemp("tiny.txt", "(3 (1 a) (4 (2 b) (0 c)))\n"), vocab, true);
  const std::vector<const ExampleGraph*> graphs = {&t.trees[0]};
  torch::manual_seed(5);
  DynamicNet net(
      DynamicNetOptions{.cell = "tree-lstm", .vocab = 4, .embedding = 3, .hidden = 4, .dropout = 0});
  net->to(torch::kFloat64);
  const Pass r = ForwardBackward(net, graphs, Batching::kBatched);
  const auto loss = [&] {
    torch::NoGradGuard no_grad;
    auto [logits, labels] = net->Forward(MakeSchedule(graphs, Batching::kBatched));
    return torch::nn::functional::cross_entropy(
               logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
        .item<double>();
  };
  size_t checked = 0;
  std::vector<torch::Tensor> params = net->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    torch::Tensor flat = params[i].detach().view({-1});
    const torch::Tensor grad = r.grads[i].view({-1});
    for (int64_t k = 0; k < flat.numel(); k += 2) {
      const double saved = flat[k].item<double>(), h = 1e-6;
      flat[k] = saved + h;
      const double up = loss();
      flat[k] = saved - h;
      const double down = loss();
      flat[k] = saved;
      EXPECT_NEAR(grad[k].item<double>(), (up - down) / (2 * h), 1e-6) << "parameter " << i << " entry " << k;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
}

// Two ranks, each with half of every global batch, take the steps one rank takes with the whole.
TEST(DynamicTrainer, TwoRanksTakeOneRanksStepsWithTheCombinedBatch) {
  std::ifstream in(DataDir() + "/train.txt");
  std::string text, line;
  for (int i = 0; i < 64 && std::getline(in, line); ++i) text += line + "\n";
  const std::string dir = ::testing::TempDir() + "sst64";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/train.txt") << text;
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
  const std::string dir = ::testing::TempDir() + "dynamic_faulty_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
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
  for (FileFault fault : {FileFault::kWriteError, FileFault::kDiskFull, FileFault::kCrash}) {
    FaultyFileSystem faulty;
    faulty.Arm(fault, "rank-0.step-4.bin", /*after_bytes=*/100);
    DynamicTrainOptions more = o;
    more.resume_dir = dir;
    more.steps = 4;
    comm::InProcessWorld world(1);
    const auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainDynamic(ctx, more); },
                                                {.file_system = &faulty});
    EXPECT_THAT(comm::testing::Message(errors[0]), HasSubstr("rank-0.step-4.bin"));
    more.checkpoint_dir.clear();
    size_t steps = 0;
    comm::testing::ExpectNoErrors(comm::testing::RunRanks(
        world, [&](comm::Context& ctx) { steps = TrainDynamic(ctx, more).step_seconds.size(); }));
    EXPECT_EQ(steps, 2u) << "resumed at step 2, the previous checkpoint";
  }
  std::filesystem::remove_all(dir);
}

TEST(WordVectors, WrongDimensionsNameFileAndLine) {
  const std::string path = WriteTemp("vectors.txt", "good 1 2 3\nbad 1 2\n");
  EXPECT_THAT(
      [&] {
        ReadWordVectors(path, {"good", "bad"}, 3);
      },
      ::testing::ThrowsMessage<ParseError>(HasSubstr("vectors.txt:2: 2 values where --embedding is 3")));
  const std::string ok = WriteTemp("vectors2.txt", "good 1 2 3\nother 4 5 6\n");
  const auto [rows, found] = ReadWordVectors(ok, {"<unk>", "good"}, 3);
  EXPECT_EQ(found, 1);
  EXPECT_EQ(rows, (std::vector<float>{0, 0, 0, 1, 2, 3}));
}

}  // namespace
}  // namespace parasol::dl::dynamic
