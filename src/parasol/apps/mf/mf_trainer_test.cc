#include "parasol/apps/mf/mf_trainer.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::mf {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

const RatingSet& Data() {
  static const RatingSet data =
      SyntheticRatings({.users = 200, .items = 150, .ratings = 12000, .rank = 4, .seed = 11});
  return data;
}

MfResult TrainOnRanks(int ranks, const MfOptions& o) {
  comm::InProcessWorld world(ranks);
  std::vector<MfResult> results(static_cast<size_t>(ranks));
  auto errors = comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { results[static_cast<size_t>(ctx.rank())] = TrainMf(ctx, Data(), o); });
  comm::testing::ExpectNoErrors(errors);
  return results[0];
}

// Several processes and workers under SSP: the objective falls well below where it started (at
// clock 0 every worker sees the initial values, so its first report is exact), and the evaluator
// traces the exact objective, ending at the final state. The step is small enough for stale
// SGD: the item rows are shared by 4 workers that each see the others' updates up to 2 clocks
// late, so their summed steps overshoot where one worker's would not. At 0.05 (8 clocks) a run
// sometimes diverged at the end (1 in 200 in release, under ASan a final objective of 0.95 of the
// start; at 0.02 1 in 100 ended above 0.6): with 0.01, 24 clocks end at 0.41-0.43 in 400 runs.
TEST(MfTrainer, LearnsUnderStalenessWithSeveralWorkers) {
  MfOptions o{.rank = 8,
              .learning_rate = 0.01f,
              .clocks = 24,
              .workers_per_process = 2,
              .staleness = 2,
              .eval_every_ms = 2};
  MfResult r = TrainOnRanks(2, o);
  ASSERT_EQ(r.events.size(), 4u * 25u);  // 4 workers report clock 0 and each of 24 clocks
  double first = 0;
  for (const MfEvent& e : r.events) first += e.clock == 0 ? e.part / static_cast<double>(r.ratings) : 0;
  EXPECT_LT(r.final_objective, 0.6 * first) << "objective from " << first << " to " << r.final_objective;
  for (const MfEvent& e : r.events) EXPECT_LE(e.clock, 24u);
  EXPECT_GT(r.stats.update_batches, 0u);
  // In-run evaluations depend on the evaluator thread getting a core during a 35 ms run (CI once
  // gave it none); the last one, the final state, is always there.
  ASSERT_GE(r.evaluations.size(), 1u);
  for (size_t i = 1; i < r.evaluations.size(); ++i)
    EXPECT_GE(r.evaluations[i].seconds, r.evaluations[i - 1].seconds);
  // The evaluator reads the shards while workers change them: never above the workers' exact
  // first report, and near the exact final state (stale workers overshoot it at times: seen 0.89x).
  for (const Evaluation& e : r.evaluations) {
    EXPECT_LE(e.objective, first * 1.001) << "at " << e.seconds << " s";
    EXPECT_GE(e.objective, r.final_objective * 0.5) << "at " << e.seconds << " s";
  }
}

// Item rows read one-sided from the shards' memory: the same learning under the same bound as
// the two-sided run beside it (stale SGD varies from run to run: 0.41-0.43 at these settings).
TEST(MfTrainer, OneSidedItemReadsLearnAsTwoSidedDo) {
  MfOptions o{.rank = 8, .learning_rate = 0.01f, .clocks = 24, .workers_per_process = 2, .staleness = 2};
  MfResult two = TrainOnRanks(2, o);
  o.one_sided_reads = true;
  MfResult one = TrainOnRanks(2, o);
  double first = 0;
  for (const MfEvent& e : one.events) first += e.clock == 0 ? e.part / static_cast<double>(one.ratings) : 0;
  EXPECT_LT(one.final_objective, 0.6 * first);
  EXPECT_NEAR(one.final_objective, two.final_objective, 0.05 * two.final_objective);
  EXPECT_GT(one.stats.one_sided_rows, 0u);
  EXPECT_EQ(two.stats.one_sided_rows, 0u);
}

// Rank 0's watch reports clocks in order as training goes, each with the objective of a state of
// the model: the start, clocks read from the shards (the newest finished when a read begins, so
// some may be passed over on a loaded machine), and last the final state, every update applied.
TEST(MfTrainer, ClocksAreReportedInOrderAsTrainingGoesAndTheLastIsTheFinalState) {
  std::vector<ClockObjective> seen;
  MfOptions o{.rank = 8,
              .clocks = 12,
              .workers_per_process = 2,
              .staleness = 1,
              .on_clock = [&](const ClockObjective& c) { seen.push_back(c); }};
  MfResult r = TrainOnRanks(2, o);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.front().clock, 0u);
  EXPECT_EQ(seen.back().clock, 12u);
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GT(seen[i].clock, seen[i - 1].clock);
    EXPECT_GE(seen[i].seconds, seen[i - 1].seconds);
    EXPECT_LE(seen[i].objective, seen[0].objective * 1.001) << "clock " << seen[i].clock;
  }
  EXPECT_EQ(seen.back().objective, r.final_objective);
  for (const MfEvent& e : r.events) {  // the workers evaluated the start only: the watch read the rest
    if (e.clock > 0) {
      EXPECT_EQ(e.part, 0.0);
    }
  }
}

// A verdict of on_clock (the command's divergence check) ends every worker of every rank, with
// the cause on the rank that gave it and its echo on the others.
TEST(MfTrainer, AnErrorFromOnClockEndsEveryRank) {
  MfOptions o{.rank = 8,
              .learning_rate = 1e10f,
              .clocks = 200,
              .workers_per_process = 2,
              .on_clock = [](const ClockObjective& c) {
                if (!std::isfinite(c.objective) || c.objective > 1e6)
                  throw DivergedError(fmt::format("objective {} at clock {}", c.objective, c.clock));
              }};
  comm::InProcessWorld world(2);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainMf(ctx, Data(), o); });
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_THROW(std::rethrow_exception(errors[0]), DivergedError);
  EXPECT_THAT(comm::testing::Message(errors[1]), HasSubstr("rank 0: objective"));
}

// One worker, a bounded model, either step rule (the adaptive step's G in the checkpoint too): the
// same seed gives the same model, and a run stopped at clock 3 and resumed from its checkpoint ends
// exactly where an uninterrupted run ends.
TEST(MfTrainer, SameSeedSameResultAcrossACheckpoint) {
  const TestDir ckpt("mf_ckpt");
  const std::string dir = ckpt.string();
  std::filesystem::remove_all(dir);
  for (MfStep step : {MfStep::kSgd, MfStep::kAdaptive}) {
    MfOptions o{.rank = 8, .step = step, .clocks = 6, .seed = 9, .consistency = ps::Consistency::kBsp};
    std::vector<ClockObjective> straight_seen, seen;
    o.on_clock = [&](const ClockObjective& c) { straight_seen.push_back(c); };
    MfResult straight = TrainOnRanks(1, o);
    o.on_clock = nullptr;
    MfResult again = TrainOnRanks(1, o);
    EXPECT_EQ(again.final_objective, straight.final_objective);
    MfOptions first_half = o;
    first_half.clocks = 3;
    first_half.checkpoint_dir = dir;
    first_half.checkpoint_every = 3;
    TrainOnRanks(1, first_half);
    MfOptions second_half = o;
    second_half.resume_dir = dir;
    second_half.on_clock = [&](const ClockObjective& c) { seen.push_back(c); };
    MfResult resumed = TrainOnRanks(1, second_half);
    EXPECT_EQ(resumed.first_clock, 3u);
    // The resumed run's figures are the uninterrupted run's, from the checkpoint's clock on.
    ASSERT_EQ(straight_seen.size(), 7u);
    ASSERT_EQ(seen.size(), 4u);
    for (size_t i = 0; i < seen.size(); ++i) {
      EXPECT_EQ(seen[i].clock, 3 + i);
      EXPECT_EQ(seen[i].objective, straight_seen[3 + i].objective) << "clock " << seen[i].clock;
    }
    EXPECT_EQ(resumed.final_objective, straight.final_objective);
    o.seed = 10;
    EXPECT_NE(TrainOnRanks(1, o).final_objective, straight.final_objective);
    std::filesystem::remove_all(dir);
  }
}

// The step rules by hand on one rating (the mean is the rating, so the error is -u.v): plain SGD
// moves u by lr (e v - lambda u); the adaptive step by lr / sqrt(G) times the same, G starting at
// 1 and growing by the mean square of each gradient. Three clocks against the start's factors.
TEST(MfTrainer, StepRulesFollowTheirFormulas) {
  const RatingSet one{.ratings = {{0, 0, 4.0f}}, .num_users = 1, .num_items = 1};
  for (MfStep step : {MfStep::kSgd, MfStep::kAdaptive}) {
    MfOptions o{.rank = 3,
                .learning_rate = 0.5f,
                .step = step,
                .lambda = 0.1f,
                .init_scale = 1.0f,
                .clocks = 0,
                .keep_model = true};
    auto train = [&](uint64_t clocks) {
      o.clocks = clocks;
      comm::InProcessWorld world(1);
      MfModel m;
      comm::testing::ExpectNoErrors(
          comm::testing::RunRanks(world, [&](comm::Context& ctx) { m = TrainMf(ctx, one, o).model; }));
      return m;
    };
    const MfModel start = train(0);
    std::vector<double> u(start.user_factors.begin(), start.user_factors.end());
    std::vector<double> v(start.item_factors.begin(), start.item_factors.end());
    double gu_sum = 1, gv_sum = 1;
    for (int clock = 1; clock <= 3; ++clock) {
      const double e = -(u[0] * v[0] + u[1] * v[1] + u[2] * v[2]);
      const double su = step == MfStep::kSgd ? 0.5 : 0.5 / std::sqrt(gu_sum);
      const double sv = step == MfStep::kSgd ? 0.5 : 0.5 / std::sqrt(gv_sum);
      double squares_u = 0, squares_v = 0;
      for (int f = 0; f < 3; ++f) {
        const double gu = 0.1 * u[f] - e * v[f], gv = 0.1 * v[f] - e * u[f];
        squares_u += gu * gu, squares_v += gv * gv;
        u[f] -= su * gu, v[f] -= sv * gv;
      }
      gu_sum += squares_u / 3, gv_sum += squares_v / 3;
      const MfModel m = train(static_cast<uint64_t>(clock));
      for (int f = 0; f < 3; ++f) {
        EXPECT_NEAR(m.user_factors[f], u[f], 1e-5) << "clock " << clock << " factor " << f;
        EXPECT_NEAR(m.item_factors[f], v[f], 1e-5) << "clock " << clock << " factor " << f;
      }
    }
    EXPECT_GT(std::abs(u[0] - start.user_factors[0]), 1e-3);  // the steps moved the factors
  }
}

// On MovieLens-shaped data the adaptive step from LIBMF's eta (0.1) learns faster than plain SGD at
// its usual rate (0.01): after 8 clocks its objective is the lower.
TEST(MfTrainer, AdaptiveStepLearnsFasterThanPlainSgd) {
  MfOptions o{.rank = 8, .learning_rate = 0.01f, .clocks = 8, .consistency = ps::Consistency::kBsp};
  const double sgd = TrainOnRanks(1, o).final_objective;
  o.step = MfStep::kAdaptive;
  o.learning_rate = 0.1f;
  const double adaptive = TrainOnRanks(1, o).final_objective;
  EXPECT_LT(adaptive, 0.9 * sgd) << "adaptive " << adaptive << ", sgd " << sgd;
}

// on_clock hears of the start, every eval_every-th clock and the last; one worker evaluates
// those alone. With several workers and eval_every 0: the final state alone.
TEST(MfTrainer, EvalEveryPicksTheReportedClocks) {
  std::vector<uint64_t> seen;
  MfOptions o{.rank = 8,
              .clocks = 10,
              .consistency = ps::Consistency::kBsp,
              .on_clock = [&](const ClockObjective& c) { seen.push_back(c.clock); },
              .eval_every = 4};
  MfResult r = TrainOnRanks(1, o);
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 4, 8, 10}));
  for (const MfEvent& e : r.events) {
    EXPECT_EQ(e.part != 0, e.clock == 0 || e.clock == 4 || e.clock == 8 || e.clock == 10) << e.clock;
  }
  seen.clear();
  o.eval_every = 0;
  o.workers_per_process = 2;
  r = TrainOnRanks(2, o);
  EXPECT_EQ(seen, (std::vector<uint64_t>{10}));
  for (const MfEvent& e : r.events) EXPECT_EQ(e.part, 0.0) << e.clock;  // no worker evaluated
}

TEST(MfTrainer, BadOptionsAreRefused) {
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    auto error = [&](MfOptions o) {
      try {
        TrainMf(ctx, Data(), o);
      } catch (const InvalidArgumentError& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    EXPECT_THAT(error({.rank = 0}), HasSubstr("rank must be in"));
    EXPECT_THAT(error({.straggler = 3}), HasSubstr("straggler worker 3 does not exist (1 workers)"));
    EXPECT_THAT(error({.straggler = 0, .straggler_factor = 0.5}), HasSubstr("factor must be at least 1"));
    EXPECT_THAT(error({.checkpoint_every = 2}), HasSubstr("needs a checkpoint directory"));
  });
  comm::testing::ExpectNoErrors(errors);
}

// A resume from a checkpoint that is not there fails on every rank with the file's name, and
// promptly: no rank is left waiting for the others.
TEST(MfTrainer, MissingCheckpointFailsEveryRank) {
  comm::InProcessWorld world(2);
  MfOptions o{.clocks = 4, .resume_dir = "/nonexistent/ckpt", .timeout_ms = 20000ms};
  auto start = std::chrono::steady_clock::now();
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainMf(ctx, Data(), o); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  for (const auto& e : errors)
    EXPECT_THAT(comm::testing::Message(e), HasSubstr("/nonexistent/ckpt/MANIFEST"));
}

}  // namespace
}  // namespace parasol::apps::mf
