// The lasso and logreg model file: written, read back the same, applied by hand-checkable sums;
// malformed files refused at their line.
#include "parasol/apps/sparse_linear/linear_model.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::sparse_linear {
namespace {

using ::testing::HasSubstr;

// Rows (label; feature id: value): (3; 0:1, 2:2), (-1; 1:4), (1; none).
data::Dataset Rows() {
  data::Dataset d;
  const std::vector<uint32_t> a{0, 2}, b{1};
  const std::vector<double> av{1, 2}, bv{4};
  d.cols = 3;
  d.AddRow(3, a, av);
  d.AddRow(-1, b, bv);
  d.AddRow(1, {}, {});
  return d;
}

TEST(LinearModel, WrittenReadBackAndAppliedAsTheSumsSay) {
  LinearModel m;
  m.fits.push_back({.lambda = 0.5, .intercept = 0.25, .weights = {{2, 1.0}}});
  m.fits.push_back({.lambda = 0.05, .intercept = 1.0, .weights = {{0, 0.5}, {2, 1.0}}});
  const std::string path = TestPath("parasol-linear-model");
  WriteLinearModel(path, m);
  const LinearModel back = ReadLinearModel(path);
  ASSERT_EQ(back.fits.size(), 2u);
  EXPECT_FALSE(back.logistic);
  EXPECT_EQ(back.fits[1].weights, m.fits[1].weights);
  EXPECT_EQ(back.fits[1].intercept, 1.0);
  EXPECT_EQ(&back.Choose(-1), &back.fits[1]);
  EXPECT_EQ(&back.Choose(0.4), &back.fits[0]);
  // Last fit: margins 1 + 0.5 + 2 = 3.5, 1, 1; errors 0.5, 2, 0 -> MSE 4.25 / 3.
  const data::Dataset d = Rows();
  EXPECT_DOUBLE_EQ(LinearModel::Margin(back.fits[1], d, 0), 3.5);
  const LinearScore s = Score(back, back.fits[1], d);
  EXPECT_DOUBLE_EQ(s.mse, 4.25 / 3);
  // Labels' mean 1: total squares 4 + 4 + 0 = 8.
  EXPECT_DOUBLE_EQ(s.r2, 1 - 4.25 / 8);
  std::filesystem::remove(path);
}

TEST(LinearModel, ALogisticModelKeepsItsLabels) {
  LinearModel m{.logistic = true, .negative_label = -1, .positive_label = 3};
  m.fits.push_back({.lambda = 0.1, .intercept = -0.5, .weights = {{0, 1.0}}});
  const std::string path = TestPath("parasol-logreg-model");
  WriteLinearModel(path, m);
  const LinearModel back = ReadLinearModel(path);
  EXPECT_TRUE(back.logistic);
  EXPECT_EQ(back.positive_label, 3);
  // Margins 0.5 (-> 3), -0.5 (-> -1), -0.5 (-> -1, label 1: wrong).
  EXPECT_DOUBLE_EQ(Score(back, back.fits[0], Rows()).accuracy, 2.0 / 3);
  std::filesystem::remove(path);
}

TEST(LinearModel, MalformedFilesAreRefusedAtTheirLine) {
  const std::string path = TestPath("parasol-linear-bad");
  auto error = [&](const std::string& text) {
    std::ofstream(path) << text;
    try {
      ReadLinearModel(path);
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error("lambda 1 intercept 0 nonzeros 0\n"), HasSubstr(":1: not a parasol lasso or logreg"));
  EXPECT_THAT(error("# parasol lasso model\nlambda 1 intercept 0 nonzeros 2\n3 0.5\n"),
              HasSubstr(":3: the file ends 1 weight lines early"));
  EXPECT_THAT(error("# parasol lasso model\nlambda 1 intercept 0 nonzeros 2\n3 0.5\n2 1\n"),
              HasSubstr(":4: features must ascend"));
  EXPECT_THAT(error("# parasol lasso model\nlambda 1 intercept x nonzeros 0\n"),
              HasSubstr(":2: intercept 'x' is not a finite number"));
  EXPECT_THAT(error("# parasol lasso model\nlambda 1 intercept 0 nonzeros 99999999999\n"),
              HasSubstr(":2: nonzeros 99999999999 is not in"));
  EXPECT_THAT(error("# parasol lasso model\n"), HasSubstr("no fit in the model"));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace parasol::apps::sparse_linear
