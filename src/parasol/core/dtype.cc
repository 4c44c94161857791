#include "parasol/core/dtype.h"

#include "parasol/core/enum_names.h"

namespace parasol {

namespace {

constexpr EnumName<DType> kDTypeNames[] = {{DType::kFloat32, "float32"}, {DType::kFloat32, "float"},
                                           {DType::kFloat32, "f32"},     {DType::kFloat64, "float64"},
                                           {DType::kFloat64, "double"},  {DType::kFloat64, "f64"},
                                           {DType::kInt32, "int32"},     {DType::kInt32, "i32"},
                                           {DType::kInt64, "int64"},     {DType::kInt64, "i64"}};

}  // namespace

std::string_view DTypeName(DType t) { return NameOf(kDTypeNames, t); }

DType ParseDType(std::string_view name) { return ParseName(kDTypeNames, name, "dtype"); }

}  // namespace parasol
