// Element types the collectives and tables carry. Type-erased cores take a DType; the typed
// user-facing templates map C++ types to it with DTypeOf<T>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace parasol {

enum class DType : uint8_t { kFloat32 = 0, kFloat64 = 1, kInt32 = 2, kInt64 = 3 };
inline constexpr int kNumDTypes = 4;

constexpr size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
  }
  return 0;
}

std::string_view DTypeName(DType t);
// Accepts "float32", "float", "f32", "float64", "double", "f64", "int32", "i32", "int64", "i64".
// Throws InvalidArgumentError otherwise.
DType ParseDType(std::string_view name);

template <typename T>
struct DTypeTraits;
template <>
struct DTypeTraits<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeTraits<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeTraits<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeTraits<int64_t> {
  static constexpr DType value = DType::kInt64;
};

template <typename T>
inline constexpr DType DTypeOf = DTypeTraits<T>::value;

}  // namespace parasol
