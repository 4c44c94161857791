#include "parasol/apps/mlr/mlr_trainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "parasol/collective/collectives.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"
#include "parasol/data/libsvm_reader.h"

namespace parasol::apps::mlr {
namespace {

std::vector<MlrResult> TrainOnRanks(int ranks, const data::Dataset& d, const MlrOptions& o) {
  comm::InProcessWorld world(ranks);
  std::vector<MlrResult> results(static_cast<size_t>(ranks));
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    results[static_cast<size_t>(ctx.rank())] = TrainMlr(ctx, d, nullptr, o);
  });
  comm::testing::ExpectNoErrors(errors);
  return results;
}

data::Dataset Letter() { return data::ReadLibsvm(std::string(PARASOL_DATA_DIR) + "/libsvm/letter-1000"); }

// The test's own accuracy of a model on d: argmax of W x + b.
double AccuracyOf(const MlrModel& m, const data::Dataset& d) {
  const size_t k = m.classes.size();
  size_t right = 0;
  for (size_t r = 0; r < d.rows(); ++r) {
    std::vector<double> s = m.biases;
    for (size_t e = 0; e < d.row_indices(r).size(); ++e) {
      const auto f = static_cast<size_t>(
          std::find(m.features.begin(), m.features.end(), d.row_indices(r)[e]) - m.features.begin());
      for (size_t c = 0; c < k; ++c) s[c] += m.weights[f * k + c] * d.row_values(r)[e];
    }
    right += m.classes[static_cast<size_t>(std::max_element(s.begin(), s.end()) - s.begin())] == d.labels[r];
  }
  return static_cast<double>(right) / static_cast<double>(d.rows());
}

TEST(MlrTest, OneStepFromZeroIsTheMeanOfTheFactors) {
  // Two samples, classes 1 and 2: at W = 0 the softmax is (1/2, 1/2), so u = (-1/2, 1/2) for
  // class 1 and (1/2, -1/2) for class 2; one step of lr 1 over the batch of 2 moves W by
  // -(1/2) sum u x' and b by -(1/2) sum u.
  data::Dataset d;
  d.cols = 3;
  const uint32_t a[] = {0, 2}, b[] = {1};
  const double va[] = {2, 1}, vb[] = {4};
  d.AddRow(1, a, va);
  d.AddRow(2, b, vb);
  const MlrResult r = TrainOnRanks(1, d, {.learning_rate = 1, .lambda = 0, .batch = 2, .epochs = 1})[0];
  ASSERT_THAT(r.model.features, testing::ElementsAre(0, 1, 2));
  // Row per feature, column per class (1, 2).
  EXPECT_THAT(r.model.weights, testing::ElementsAre(0.5, -0.5, -1, 1, 0.25, -0.25));
  EXPECT_THAT(r.model.biases, testing::ElementsAre(0, 0));
  EXPECT_NEAR(r.epochs[0].train_loss, std::log(2.0), 1e-12);
}

TEST(MlrTest, WeightDecayShrinksEveryWeightEachStep) {
  // After the first step, steps on a sample whose gradient is zero in feature 0 still shrink
  // feature 0's weights by (1 - lr lambda) each.
  data::Dataset d;
  d.cols = 2;
  const uint32_t a[] = {0}, b[] = {1};
  const double one[] = {1};
  d.AddRow(1, a, one);
  d.AddRow(2, b, one);
  const double lr = 0.5, lambda = 0.1;
  const MlrResult one_step =
      TrainOnRanks(1, d, {.learning_rate = lr, .lambda = lambda, .batch = 1, .epochs = 1, .max_steps = 1})[0];
  const MlrResult two =
      TrainOnRanks(1, d, {.learning_rate = lr, .lambda = lambda, .batch = 1, .epochs = 1, .max_steps = 2})[0];
  // Which sample came first depends on the shuffle; the feature it did not touch decays.
  const size_t touched = one_step.model.weights[0] != 0 ? 0 : 1;
  EXPECT_NEAR(two.model.weights[touched * 2], one_step.model.weights[touched * 2] * (1 - lr * lambda), 1e-15);
}

TEST(MlrTest, ParameterServerUnderBspAndSufficientFactorsTakeTheSameSteps) {
  const data::Dataset d = Letter();
  for (int ranks : {1, 2, 3}) {
    MlrOptions o{.learning_rate = 0.5, .lambda = 1e-3, .batch = 16, .epochs = 2};
    o.comm = Comm::kSfb;
    const MlrResult sfb = TrainOnRanks(ranks, d, o)[0];
    o.comm = Comm::kPs;
    const MlrResult ps = TrainOnRanks(ranks, d, o)[0];
    ASSERT_EQ(sfb.model.weights.size(), ps.model.weights.size());
    ASSERT_EQ(sfb.steps, ps.steps);
    for (size_t i = 0; i < sfb.model.weights.size(); ++i)
      ASSERT_NEAR(sfb.model.weights[i], ps.model.weights[i], 1e-9) << ranks << " ranks, weight " << i;
    for (size_t c = 0; c < sfb.model.biases.size(); ++c)
      EXPECT_NEAR(sfb.model.biases[c], ps.model.biases[c], 1e-9);
    EXPECT_NEAR(sfb.epochs.back().train_loss, ps.epochs.back().train_loss, 1e-9);
  }
}

TEST(MlrTest, SufficientFactorBytesMatchTheirFormula) {
  // Every sample has exactly 3 nonzeros with ids below 128 apart, so a sample's factors take
  // 8 K (u) + 1 (the count) + 3 (one byte per id gap) + 3 x 8 (values) bytes, and a rank's block
  // for b samples 1 + b (8 K + 28) bytes rounded up to whole 8-byte words. In the ring all-gather
  // a rank sends its length to the P - 1 others (8 bytes each), then every block but its
  // successor's.
  data::Dataset d;
  d.cols = 50;
  std::mt19937 rng(3);
  for (int i = 0; i < 103; ++i) {
    const uint32_t ids[] = {static_cast<uint32_t>(rng() % 10), static_cast<uint32_t>(10 + rng() % 20), 40};
    const double vals[] = {1, 0.5, -1};
    d.AddRow(i % 4, ids, vals);
  }
  const int ranks = 3;
  const uint64_t batch = 8, k = 4;
  const MlrOptions o{.comm = Comm::kSfb, .batch = batch, .epochs = 2};
  const std::vector<MlrResult> results = TrainOnRanks(ranks, d, o);
  // Blocks of 35, 34, 34 samples: 5 steps per epoch, the last with 3 samples on rank 0, 2 elsewhere.
  const uint64_t rows[ranks] = {35, 34, 34};
  for (int rank = 0; rank < ranks; ++rank) {
    uint64_t expected = 0;
    for (uint64_t step = 0; step < 5; ++step) {
      for (int other = 0; other < ranks; ++other) {
        if (other == (rank + 1) % ranks) continue;
        const uint64_t samples = std::min<uint64_t>(batch, rows[other] - step * batch);
        expected += (1 + samples * (8 * k + 28) + 7) / 8 * 8;
      }
      expected += 8 * (ranks - 1);
    }
    expected *= 2;  // epochs
    EXPECT_EQ(results[static_cast<size_t>(rank)].bytes_sent, expected) << "rank " << rank;
  }
  // The estimate `--comm auto` uses (two bytes per id) is within 10% of a full step's bytes.
  const CommCost estimate = EstimateCommCost(k, 3, 20, batch, ranks);
  const double full_step = (ranks - 1) * ((1 + batch * (8 * k + 28) + 7) / 8 * 8 + 8.0);
  EXPECT_NEAR(estimate.sfb_bytes, full_step, 0.1 * full_step);
}

TEST(MlrTest, LearnsLetters) {
  const data::Dataset d = Letter();
  const MlrOptions o{.comm = Comm::kSfb, .learning_rate = 1, .lambda = 1e-4, .batch = 10, .epochs = 30};
  const MlrResult r = TrainOnRanks(2, d, o)[0];
  EXPECT_LT(r.epochs.back().train_loss, 0.7 * r.epochs.front().train_loss);
  // Softmax regression on these 16 features: about 75% on the whole set (LIBLINEAR's figure).
  EXPECT_GT(AccuracyOf(r.model, d), 0.7);
  EXPECT_EQ(r.model.classes.size(), 26u);
}

TEST(MlrTest, StaleReadsStillLearn) {
  const data::Dataset d = Letter();
  MlrOptions o{.comm = Comm::kPs, .learning_rate = 1, .lambda = 1e-4, .batch = 10, .epochs = 10};
  o.consistency = {.model = ps::Consistency::kSsp, .staleness = 3};
  const MlrResult r = TrainOnRanks(2, d, o)[0];
  EXPECT_GT(AccuracyOf(r.model, d), 0.6);
}

TEST(MlrTest, AResumedRunTakesTheUninterruptedRunsSteps) {
  const data::Dataset d = Letter();
  const TestDir ckpt("mlr_checkpoint");
  const std::string dir = ckpt.string();
  for (Comm comm : {Comm::kSfb, Comm::kPs}) {
    std::filesystem::remove_all(dir);
    MlrOptions o{
        .comm = comm, .learning_rate = 0.5, .lr_decay = 0.3, .lambda = 1e-3, .batch = 16, .epochs = 4};
    const MlrResult straight = TrainOnRanks(2, d, o)[0];
    MlrOptions first = o;
    first.epochs = 2;
    first.checkpoint_dir = dir;
    first.checkpoint_every = 2;
    TrainOnRanks(2, d, first);
    MlrOptions second = o;
    second.resume_dir = dir;
    const MlrResult resumed = TrainOnRanks(2, d, second)[0];
    EXPECT_EQ(resumed.first_epoch, 3u);
    EXPECT_EQ(resumed.steps, straight.steps);
    ASSERT_EQ(resumed.model.weights.size(), straight.model.weights.size());
    for (size_t i = 0; i < straight.model.weights.size(); ++i)
      ASSERT_NEAR(resumed.model.weights[i], straight.model.weights[i], 1e-12)
          << CommName(comm) << " weight " << i;
    EXPECT_NEAR(resumed.epochs.back().train_loss, straight.epochs.back().train_loss, 1e-12);
    // A checkpoint of the other scheme is refused, by name.
    MlrOptions other = second;
    other.comm = comm == Comm::kSfb ? Comm::kPs : Comm::kSfb;
    comm::InProcessWorld world(1);
    auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
      try {
        TrainMlr(ctx, d, nullptr, other);
        ADD_FAILURE() << "resumed from a checkpoint of the other scheme";
      } catch (const InvalidArgumentError& e) {
        EXPECT_THAT(e.what(), testing::HasSubstr("a checkpoint of --comm"));
      }
    });
    comm::testing::ExpectNoErrors(errors);
  }
  // A torn weights file is found by its size or checksum, and named.
  std::filesystem::remove_all(dir);
  MlrOptions o{.comm = Comm::kSfb, .batch = 16, .epochs = 1, .checkpoint_dir = dir, .checkpoint_every = 1};
  TrainOnRanks(1, d, o);
  std::filesystem::resize_file(dir + "/weights.bin", std::filesystem::file_size(dir + "/weights.bin") - 3);
  o.resume_dir = dir;
  o.checkpoint_dir.clear();
  o.epochs = 2;
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    try {
      TrainMlr(ctx, d, nullptr, o);
      ADD_FAILURE() << "resumed from a torn file";
    } catch (const ParseError& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr("weights.bin"));
    }
  });
  comm::testing::ExpectNoErrors(errors);
}

// A checkpoint whose weights cannot be written (a failed write, a full disk, a crash half-way)
// ends the run with an error naming the file and leaves the previous checkpoint.
TEST(MlrTest, AFailedCheckpointLeavesThePreviousOne) {
  const data::Dataset d = Letter();
  const TestDir ckpt("mlr_faulty");
  const std::string dir = ckpt.string();
  MlrOptions o{.comm = Comm::kSfb, .batch = 16, .epochs = 1, .checkpoint_dir = dir, .checkpoint_every = 1};
  TrainOnRanks(1, d, o);
  MlrOptions more = o;
  more.resume_dir = dir;
  more.epochs = 2;
  MlrOptions resume = more;
  resume.checkpoint_dir.clear();
  comm::testing::ForEachCheckpointFault(
      "weights.bin", 500, [&](comm::Context& ctx) { TrainMlr(ctx, d, nullptr, more); },
      [&] {
        EXPECT_EQ(TrainOnRanks(1, d, resume)[0].first_epoch, 2u) << "resumed from the previous checkpoint";
      });
}

TEST(MlrTest, BadInputsAreRejected) {
  data::Dataset one;
  one.cols = 1;
  const uint32_t id[] = {0};
  const double v[] = {1};
  one.AddRow(3, id, v);
  one.AddRow(3, id, v);
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    EXPECT_THROW(TrainMlr(ctx, one, nullptr, {}), InvalidArgumentError);
    EXPECT_THROW(TrainMlr(ctx, Letter(), nullptr, {.batch = 0}), InvalidArgumentError);
  });
  comm::testing::ExpectNoErrors(errors);
  EXPECT_THROW(ParseComm("mpi"), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::apps::mlr
