#include "parasol/apps/svm/svm_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::svm {
namespace {

class SvmModelTest : public testing::Test {
 protected:
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  TestDir dir_{"svm_model"};
};

// Samples (1,0) of class 3, (0,1) and (2,2) of class 5 with multipliers 0.5, 0.25, 0 (the last
// is not a support vector).
SvmModel Small(KernelParams kernel) {
  data::Dataset d;
  d.cols = 2;
  const uint32_t first[] = {0}, second[] = {1}, both[] = {0, 1};
  const double one[] = {1}, two[] = {2, 2};
  d.AddRow(3, first, one);
  d.AddRow(5, second, one);
  d.AddRow(5, both, two);
  const std::vector<double> labels = ClassOrder(d);
  EXPECT_THAT(labels, testing::ElementsAre(3, 5));
  const PairSolution pair{.first = 0, .second = 1, .rows = {0, 1, 2}, .alpha = {0.5, 0.25, 0}, .rho = 0.125};
  return AssembleModel(d, labels, std::span(&pair, 1), kernel);
}

TEST_F(SvmModelTest, DecisionValuesAreTheKernelExpansion) {
  const SvmModel m = Small({.type = KernelType::kPolynomial, .gamma = 2, .coef0 = 1, .degree = 2});
  ASSERT_EQ(m.coefficients.size(), 1u);
  ASSERT_THAT(m.coefficients[0], testing::ElementsAre(0.5, -0.25));
  data::Dataset x;
  x.cols = 3;
  const uint32_t ids[] = {0, 2};
  const double vals[] = {1, 4};  // x = (1, 0, 4): x.sv1 = 1, x.sv2 = 0
  x.AddRow(0, ids, vals);
  // 0.5 (2 + 1)^2 - 0.25 (0 + 1)^2 - 0.125
  EXPECT_THAT(DecisionValues(m, x), testing::ElementsAre(testing::DoubleEq(4.5 - 0.25 - 0.125)));
}

TEST_F(SvmModelTest, WrittenModelsReadBackTheSame) {
  for (KernelType type :
       {KernelType::kLinear, KernelType::kPolynomial, KernelType::kRbf, KernelType::kSigmoid}) {
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
  const std::string path = Write("libsvm",
                                 "svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\n"
                                 "total_sv 3\nrho -0.25\nlabel 1 -1\nprobA -3.1\nprobB 0.2\n"
                                 "nr_sv 1 2\nSV\n1 1:0.5 3:1 \n-0.5 2:1 \n-0.5 \n");
  const SvmModel m = ReadSvmModel(path);
  EXPECT_EQ(m.kernel.type, KernelType::kRbf);
  EXPECT_EQ(m.kernel.gamma, 0.5);
  EXPECT_THAT(m.rho, testing::ElementsAre(-0.25));
  EXPECT_THAT(m.labels, testing::ElementsAre(1, -1));
  EXPECT_THAT(m.coefficients, testing::ElementsAre(testing::ElementsAre(1, -0.5, -0.5)));
  EXPECT_THAT(m.support_vectors.labels, testing::ElementsAre(1, -1, -1));
  EXPECT_THAT(m.support_vectors.indices, testing::ElementsAre(0, 2, 1));
}

// Three classes, one support vector each, linear kernel: A = 1 at x = (1, 0), B = 2 at (-1, 0),
// C = 3 at (0, 1); every coefficient +-1 and rho 0, so each pair's decision value is a difference
// of two dot products the test can do by hand.
TEST_F(SvmModelTest, SeveralClassesVoteOneAgainstOne) {
  const std::string path = Write("three",
                                 "svm_type c_svc\nkernel_type linear\nnr_class 3\ntotal_sv 3\n"
                                 "rho 0 0 0\nlabel 1 2 3\nnr_sv 1 1 1\nSV\n1 1 1:1\n-1 1 1:-1\n-1 -1 2:1\n");
  const SvmModel m = ReadSvmModel(path);
  data::Dataset x;
  x.cols = 2;
  const uint32_t first[] = {0}, second[] = {1};
  const double two[] = {2}, minus_two[] = {-2}, three[] = {3};
  x.AddRow(1, first, two);        // (A,B): 2 + 2 > 0 A; (A,C): 2 > 0 A; (B,C): -2 C -> A
  x.AddRow(3, second, three);     // (A,B): 0 B; (A,C): -3 C; (B,C): -3 C -> C
  x.AddRow(2, first, minus_two);  // (A,B): -4 B; (A,C): -2 C; (B,C): 2 B -> B
  EXPECT_THAT(DecisionValues(m, x), testing::ElementsAre(4, 2, -2, 0, -3, -3, -4, -2, 2));
  EXPECT_THAT(Predict(m, x), testing::ElementsAre(1, 3, 2));

  // The same model assembled from the three pairs' solutions, as training makes it.
  data::Dataset d;
  d.cols = 2;
  const double one[] = {1}, minus_one[] = {-1};
  d.AddRow(1, first, one);
  d.AddRow(2, first, minus_one);
  d.AddRow(3, second, one);
  const PairSolution pairs[] = {{.first = 0, .second = 1, .rows = {0, 1}, .alpha = {1, 1}},
                                {.first = 0, .second = 2, .rows = {0, 2}, .alpha = {1, 1}},
                                {.first = 1, .second = 2, .rows = {1, 2}, .alpha = {1, 1}}};
  const SvmModel built = AssembleModel(d, ClassOrder(d), pairs, {.type = KernelType::kLinear});
  EXPECT_EQ(built.coefficients, m.coefficients);
  EXPECT_EQ(built.per_class, m.per_class);
  WriteSvmModel(Path("built"), built);
  EXPECT_THAT(Predict(ReadSvmModel(Path("built")), x), testing::ElementsAre(1, 3, 2));
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
      {"svm_type c_svc\nkernel_type linear\nnr_class 1\n", ":3: nr_class 1 is not in [2, 65536]"},
      {"svm_type c_svc\nkernel_type linear\nnr_class 3\ntotal_sv 0\nrho 0\nlabel 1 2 3\nnr_sv 0 0 0\nSV\n",
       ":8: 'rho' needs 3 values"},
      {head + "total_sv 1\nrho 0\nlabel 1 -1 3\nnr_sv 1 0\nSV\n",
       ":8: 'label' lists 3 classes, nr_class is 2"},
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
