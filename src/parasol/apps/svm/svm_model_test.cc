#include "parasol/apps/svm/svm_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "parasol/core/error.h"

namespace parasol::apps::svm {
namespace {

class SvmModelTest : public testing::Test {
 protected:
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("svm_model_test_" + std::to_string(::getpid()));
};

// Samples (1,0) +1, (0,1) -1, (2,2) -1 with multipliers 0.5, 0.25, 0 (not a support vector).
SvmModel Small(KernelParams kernel) {
  data::Dataset d;
  d.cols = 2;
  const uint32_t first[] = {0}, second[] = {1}, both[] = {0, 1};
  const double one[] = {1}, two[] = {2, 2};
  d.AddRow(3, first, one);
  d.AddRow(5, second, one);
  d.AddRow(5, both, two);
  std::vector<int8_t> y;
  const auto labels = TwoClasses(d, &y);
  EXPECT_THAT(labels, testing::ElementsAre(3, 5));
  const double alpha[] = {0.5, 0.25, 0};
  return MakeModel(d, labels, y, alpha, 0.125, kernel);
}

TEST_F(SvmModelTest, DecisionValuesAreTheKernelExpansion) {
  const SvmModel m = Small({.type = KernelType::kPolynomial, .gamma = 2, .coef0 = 1, .degree = 2});
  ASSERT_EQ(m.coefficients.size(), 2u);
  data::Dataset x;
  x.cols = 3;
  const uint32_t ids[] = {0, 2};
  const double vals[] = {1, 4};  // x = (1, 0, 4): x.sv1 = 1, x.sv2 = 0
  x.AddRow(0, ids, vals);
  // 0.5 (2 + 1)^2 - 0.25 (0 + 1)^2 - 0.125
  EXPECT_THAT(DecisionValues(m, x), testing::ElementsAre(testing::DoubleEq(4.5 - 0.25 - 0.125)));
}

TEST_F(SvmModelTest, WrittenModelsReadBackTheSame) {
  for (KernelType type : {KernelType::kLinear, KernelType::kPolynomial, KernelType::kRbf, KernelType::kSigmoid}) {
    const SvmModel m = Small({.type = type, .gamma = 0.1 / 3, .coef0 = -0.5, .degree = 4});
    WriteSvmModel(Path("m"), m);
    const SvmModel back = ReadSvmModel(Path("m"));
    EXPECT_EQ(back.kernel.type, type);
    if (type != KernelType::kLinear) {
      EXPECT_EQ(back.kernel.gamma, m.kernel.gamma);
    }
    EXPECT_EQ(back.rho, m.rho);
    EXPECT_EQ(back.labels, m.labels);
    EXPECT_EQ(back.coefficients, m.coefficients);
    EXPECT_EQ(back.support_vectors.indices, m.support_vectors.indices);
    EXPECT_EQ(back.support_vectors.values, m.support_vectors.values);
    EXPECT_EQ(back.support_vectors.labels, m.support_vectors.labels);
  }
}

TEST_F(SvmModelTest, ReadsLibsvmsOwnLayout) {
  // As svm-train writes it: trailing blanks, 8-digit values, probability lines.
  const std::string path = Write("libsvm", "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\n"
                                           "total_sv 3\nrho -0.25\nlabel 1 -1\nprobA -3.1\nprobB 0.2\n"
                                           "nr_sv 1 2\nSV\n1 1:0.5 3:1 \n-0.5 2:1 \n-0.5 \n");
  const SvmModel m = ReadSvmModel(path);
  EXPECT_EQ(m.kernel.type, KernelType::kRbf);
  EXPECT_EQ(m.kernel.gamma, 0.5);
  EXPECT_EQ(m.rho, -0.25);
  EXPECT_THAT(m.labels, testing::ElementsAre(1, -1));
  EXPECT_THAT(m.coefficients, testing::ElementsAre(1, -0.5, -0.5));
  EXPECT_THAT(m.support_vectors.labels, testing::ElementsAre(1, -1, -1));
  EXPECT_THAT(m.support_vectors.indices, testing::ElementsAre(0, 2, 1));
}

TEST_F(SvmModelTest, MalformedModelsNameFileAndLine) {
  const std::string head = "svm_type c_svc\nkernel_type linear\nnr_class 2\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + "total_sv 1\nrho 0\nlabel 1 -1\nnr_sv 1 0\n", ":7: the file ends before 'SV'"},
      {head + "total_sv 2\nrho 0\nlabel 1 -1\nnr_sv 1 0\nSV\n1 1:1\n", "nr_sv does not add up"},
      {head + "total_sv 1\nrho 0\nlabel 1 -1\nnr_sv 1 0\nSV\n1 1:1\n1 1:1\n", ":10: more than total_sv = 1"},
      {head + "total_sv 2\nrho 0\nlabel 1 -1\nnr_sv 1 1\nSV\n1 1:1\n", "1 vectors, but total_sv says 2"},
      {head + "total_sv 1\nrho x\nlabel 1 -1\nnr_sv 1 0\nSV\n1 1:1\n", ":5: rho 'x' is not a finite number"},
      {head + "total_sv 1\nrho 0\nlabel 1 -1\nnr_sv 1 0\nSV\n1 2:1 1:1\n", ":9: indices must ascend"},
      {head + "total_sv 1\nrho 0\nlabel 1 -1\nnr_sv 1 0\nSV\n1 0:1\n", ":9: index 0 is not in"},
      {"svm_type nu_svc\n", ":1: svm_type 'nu_svc': only c_svc"},
      {"svm_type c_svc\nkernel_type linear\nnr_class 3\n", ":3: only two-class models"},
      {head + "rho 0\nSV\n", "no 'total_sv' line before 'SV'"},
      {head + "rho 0\nrho 1\n", ":5: 'rho' given twice"},
  };
  for (const auto& [text, message] : cases) {
    const std::string path = Write("bad", text);
    try {
      ReadSvmModel(path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ParseError& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr(path)) << text;
      EXPECT_THAT(e.what(), testing::HasSubstr(message)) << text;
    }
  }
}

}  // namespace
}  // namespace parasol::apps::svm
