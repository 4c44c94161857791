#include "parasol/core/reduce_op.h"

#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol {
namespace {

TEST(ReduceOp, FloatKernelsMatchArithmetic) {
  std::vector<float> a = {1.5f, -2.0f, 3.0f, 0.0f, 7.25f};
  const std::vector<float> b = {2.0f, 4.0f, -3.0f, 5.0f, 7.25f};
  struct Case {
    ReduceOp op;
    std::vector<float> want;
  };
  const Case cases[] = {
      {ReduceOp::kSum, {3.5f, 2.0f, 0.0f, 5.0f, 14.5f}},
      {ReduceOp::kProduct, {3.0f, -8.0f, -9.0f, 0.0f, 52.5625f}},
      {ReduceOp::kMin, {1.5f, -2.0f, -3.0f, 0.0f, 7.25f}},
      {ReduceOp::kMax, {2.0f, 4.0f, 3.0f, 5.0f, 7.25f}},
  };
  for (const auto& c : cases) {
    std::vector<float> dst = a;
    GetReduceFn(DType::kFloat32, c.op)(dst.data(), b.data(), dst.size());
    EXPECT_EQ(dst, c.want) << ReduceOpName(c.op);
  }
}

TEST(ReduceOp, IntegerSumWrapsInsteadOfOverflowing) {
  std::vector<int32_t> dst = {std::numeric_limits<int32_t>::max(), -5};
  std::vector<int32_t> src = {1, 7};
  GetReduceFn(DType::kInt32, ReduceOp::kSum)(dst.data(), src.data(), 2);
  EXPECT_EQ(dst[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(dst[1], 2);
}

TEST(ReduceOp, Int64MinMaxAndDouble) {
  std::vector<int64_t> d = {int64_t{1} << 40, -3};
  std::vector<int64_t> s = {int64_t{1} << 41, -4};
  GetReduceFn(DType::kInt64, ReduceOp::kMax)(d.data(), s.data(), 2);
  EXPECT_EQ(d, (std::vector<int64_t>{int64_t{1} << 41, -3}));
  std::vector<double> x = {0.1, 1e300};
  std::vector<double> y = {0.2, 1e300};
  GetReduceFn(DType::kFloat64, ReduceOp::kSum)(x.data(), y.data(), 2);
  EXPECT_DOUBLE_EQ(x[0], 0.1 + 0.2);
  EXPECT_EQ(x[1], 2e300);
}

TEST(ReduceOp, ThreeOperandKernelGivesTheSameBits) {
  std::vector<float> a = {0.1f, 1e-8f, -3.5f, 7.0f}, b = {0.2f, 1.0f, 2.25f, -7.0f};
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProduct, ReduceOp::kMin, ReduceOp::kMax}) {
    std::vector<float> two = a, three(4, -1.0f);
    GetReduceFn(DType::kFloat32, op)(two.data(), b.data(), 4);
    GetReduceFn3(DType::kFloat32, op)(three.data(), a.data(), b.data(), 4);
    EXPECT_EQ(two, three) << ReduceOpName(op);
  }
}

TEST(ReduceOp, ParseNames) {
  EXPECT_EQ(ParseReduceOp("prod"), ReduceOp::kProduct);
  EXPECT_EQ(ParseReduceOp("max"), ReduceOp::kMax);
  EXPECT_THROW(ParseReduceOp("avg"), InvalidArgumentError);
  EXPECT_EQ(ParseDType("double"), DType::kFloat64);
  EXPECT_THROW(ParseDType("bfloat16"), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol
