#include "parasol/apps/svm/kernel.h"

#include <gtest/gtest.h>

#include <cmath>

#include "parasol/core/error.h"

namespace parasol::apps::svm {
namespace {

// Rows a = (1, 2, 0, 0), b = (0, 1, 0, 3), c = (0, 0, 0, 0): a.b = 2, |a|^2 = 5, |b|^2 = 10.
data::Dataset ThreeRows() {
  data::Dataset d;
  d.cols = 4;
  const uint32_t ia[] = {0, 1}, ib[] = {1, 3};
  const double va[] = {1, 2}, vb[] = {1, 3};
  d.AddRow(1, ia, va);
  d.AddRow(-1, ib, vb);
  d.AddRow(1, {}, {});
  return d;
}

TEST(KernelTest, ColumnsMatchTheFormulas) {
  const data::Dataset d = ThreeRows();
  const uint32_t rows[] = {0, 1, 2};
  KernelMatrix::Scratch scratch;
  float out[3];
  KernelMatrix linear(d, {.type = KernelType::kLinear});
  linear.Column(0, rows, out, scratch);
  EXPECT_FLOAT_EQ(out[0], 5);
  EXPECT_FLOAT_EQ(out[1], 2);
  EXPECT_FLOAT_EQ(out[2], 0);
  KernelMatrix rbf(d, {.type = KernelType::kRbf, .gamma = 0.1});
  rbf.Column(1, rows, out, scratch);
  EXPECT_FLOAT_EQ(out[0], static_cast<float>(std::exp(-0.1 * (5 + 10 - 4))));
  EXPECT_FLOAT_EQ(out[1], 1);
  EXPECT_FLOAT_EQ(out[2], static_cast<float>(std::exp(-0.1 * 10)));
  KernelMatrix poly(d, {.type = KernelType::kPolynomial, .gamma = 0.5, .coef0 = 1, .degree = 3});
  poly.Column(0, rows, out, scratch);
  EXPECT_FLOAT_EQ(out[1], 8);  // (0.5 * 2 + 1)^3
  KernelMatrix sigmoid(d, {.type = KernelType::kSigmoid, .gamma = 0.5, .coef0 = -1});
  sigmoid.Column(0, rows, out, scratch);
  EXPECT_FLOAT_EQ(out[1], static_cast<float>(std::tanh(0.5 * 2 - 1)));
  EXPECT_DOUBLE_EQ(rbf.Diagonal(0), 1);
  EXPECT_DOUBLE_EQ(linear.Diagonal(1), 10);
}

TEST(KernelTest, AForeignRowCountsFeaturesNoRowHasInItsNorm) {
  const data::Dataset d = ThreeRows();
  KernelMatrix rbf(d, {.type = KernelType::kRbf, .gamma = 0.1});
  // x = (1, 0, 5, 0): feature 2 occurs in no row: x.a = 1, |x|^2 = 26.
  const uint32_t ids[] = {0, 2};
  const double vals[] = {1, 5};
  const uint32_t rows[] = {0, 2};
  double out[2];
  KernelMatrix::Scratch scratch;
  rbf.Column(ids, vals, rows, out, scratch);
  EXPECT_DOUBLE_EQ(out[0], std::exp(-0.1 * (26 + 5 - 2)));
  EXPECT_DOUBLE_EQ(out[1], std::exp(-0.1 * 26));
  // The scratch row is left clean: the next column is not polluted by this one.
  float again[1];
  const uint32_t self[] = {2};
  rbf.Column(2, self, again, scratch);
  EXPECT_FLOAT_EQ(again[0], 1);
}

TEST(KernelTest, NamesParse) {
  EXPECT_EQ(ParseKernelType("poly"), KernelType::kPolynomial);
  EXPECT_EQ(ParseKernelType(KernelName(KernelType::kPolynomial)), KernelType::kPolynomial);
  EXPECT_THROW(ParseKernelType("gaussian"), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::apps::svm
