// The model `parasol mf --model` writes: the trained state, read back whole, predicting what
// training measured.
#include "parasol/apps/mf/mf_model.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/apps/mf/mf_trainer.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::mf {
namespace {

// Trained on 2 ranks of 2 workers each: rank 0's model is the final state, so its objective,
// computed from the model alone, is the final objective training reported.
TEST(MfModel, TheTrainedModelGivesTheFinalObjectiveAndReadsBackTheSame) {
  const RatingSet data = SyntheticRatings({.users = 120, .items = 90, .ratings = 6000, .rank = 4, .seed = 5});
  comm::InProcessWorld world(2);
  MfResult r;
  const MfOptions o{.rank = 6, .clocks = 5, .workers_per_process = 2, .keep_model = true};
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    MfResult mine = TrainMf(ctx, data, o);
    if (ctx.rank() == 0) r = std::move(mine);
  });
  comm::testing::ExpectNoErrors(errors);
  const MfModel& m = r.model;
  ASSERT_EQ(m.rank, 6u);
  ASSERT_EQ(m.user_factors.size(), 120u * 6);
  ASSERT_EQ(m.item_factors.size(), 90u * 6);
  double norms = 0;
  for (const auto* f : {&m.user_factors, &m.item_factors}) {
    for (float x : *f) norms += static_cast<double>(x) * x;
  }
  const double rmse = Rmse(m, data);
  const double n = static_cast<double>(data.ratings.size());
  EXPECT_NEAR((rmse * rmse * n + o.lambda * norms) / n, r.final_objective, 1e-6 * r.final_objective);

  const std::string path = TestPath("parasol-mf-model");
  LocalFileSystem fs;
  WriteMfModel(fs, path, m);
  const MfModel back = ReadMfModel(path);
  EXPECT_EQ(back.rank, m.rank);
  EXPECT_EQ(back.mean, m.mean);
  EXPECT_EQ(back.user_factors, m.user_factors);
  EXPECT_EQ(back.item_factors, m.item_factors);
  EXPECT_EQ(Rmse(back, data), rmse);
  // A user or item training never saw gets the mean.
  EXPECT_EQ(back.Predict(120, 3), m.mean);
  EXPECT_EQ(back.Predict(3, 90), m.mean);

  // Cut short, the file is refused with its name, and nothing is read from it.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 16);
  EXPECT_THROW(
      {
        try {
          ReadMfModel(path);
        } catch (const ParseError& e) {
          EXPECT_THAT(e.what(), ::testing::HasSubstr(path));
          throw;
        }
      },
      ParseError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace parasol::apps::mf
