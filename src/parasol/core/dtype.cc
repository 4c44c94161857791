#include "parasol/core/dtype.h"

#include <string>

#include "parasol/core/error.h"

namespace parasol {

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
  }
  return "unknown";
}

DType ParseDType(std::string_view name) {
  if (name == "float32" || name == "float" || name == "f32") return DType::kFloat32;
  if (name == "float64" || name == "double" || name == "f64") return DType::kFloat64;
  if (name == "int32" || name == "i32") return DType::kInt32;
  if (name == "int64" || name == "i64") return DType::kInt64;
  throw InvalidArgumentError("unknown dtype '" + std::string(name) +
                             "' (expected float32, float64, int32 or int64)");
}

}  // namespace parasol
