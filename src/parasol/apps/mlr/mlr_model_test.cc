// The model `parasol mlr --model` writes: trained on two ranks, read back whole, the same
// predictions; a damaged file refused with its name.
#include "parasol/apps/mlr/mlr_model.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/apps/mlr/mlr_trainer.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"
#include "parasol/data/libsvm_reader.h"

namespace parasol::apps::mlr {
namespace {

TEST(MlrModel, TheTrainedModelReadsBackAndPredictsTheSame) {
  const data::Dataset d = data::ReadLibsvm(std::string(PARASOL_DATA_DIR) + "/libsvm/letter-1000");
  comm::InProcessWorld world(2);
  MlrResult r;
  MlrOptions o;
  o.epochs = 3;
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    MlrResult mine = TrainMlr(ctx, d, &d, o);
    if (ctx.rank() == 0) r = std::move(mine);
  });
  comm::testing::ExpectNoErrors(errors);
  ASSERT_EQ(r.model.classes.size(), 26u);
  const std::string path = TestPath("mlr-model");
  LocalFileSystem fs;
  WriteMlrModel(fs, path, r.model);
  const MlrModel back = ReadMlrModel(path);
  EXPECT_EQ(back.weights, r.model.weights);
  EXPECT_EQ(back.biases, r.model.biases);
  const std::vector<double> predicted = back.Predict(d);
  EXPECT_EQ(predicted, r.model.Predict(d));
  // The test accuracy training reported after its last epoch is the read-back model's.
  EXPECT_DOUBLE_EQ(static_cast<double>(data::CountCorrect(d, predicted)) / static_cast<double>(d.rows()),
                   r.epochs.back().test_accuracy);

  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 8);
  try {
    ReadMlrModel(path);
    ADD_FAILURE() << "a truncated model was read";
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(path));
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace parasol::apps::mlr
