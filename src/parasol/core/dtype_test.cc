#include "parasol/core/dtype.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol {
namespace {

TEST(DType, EveryNameAUserMayWriteAndItsSize) {
  for (const char* name : {"float32", "float", "f32"}) EXPECT_EQ(ParseDType(name), DType::kFloat32) << name;
  for (const char* name : {"float64", "double", "f64"}) EXPECT_EQ(ParseDType(name), DType::kFloat64) << name;
  for (const char* name : {"int32", "i32"}) EXPECT_EQ(ParseDType(name), DType::kInt32) << name;
  for (const char* name : {"int64", "i64"}) EXPECT_EQ(ParseDType(name), DType::kInt64) << name;
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    EXPECT_EQ(ParseDType(DTypeName(t)), t) << "the name it prints reads back";
  }
  EXPECT_EQ(DTypeSize(DType::kFloat64), sizeof(double));
  EXPECT_EQ(DTypeSize(DTypeOf<int32_t>), sizeof(int32_t));
}

TEST(DType, AnUnknownNameIsRefused) {
  try {
    ParseDType("float16");
    FAIL() << "float16 was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("float16"));
  }
}

}  // namespace
}  // namespace parasol
