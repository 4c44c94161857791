#include "parasol/core/reduce_op.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "parasol/core/error.h"

namespace parasol {
namespace {

// Unsigned arithmetic so integer overflow wraps instead of being undefined.
template <typename T, bool = std::is_integral_v<T>>
struct WrapT { using type = T; };
template <typename T>
struct WrapT<T, true> { using type = std::make_unsigned_t<T>; };
template <typename T>
using Wrap = typename WrapT<T>::type;

template <typename T, ReduceOp kOp>
void Kernel(void* dst_v, const void* src_v, size_t n) {
  T* __restrict dst = static_cast<T*>(dst_v);
  const T* __restrict src = static_cast<const T*>(src_v);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (kOp == ReduceOp::kSum) {
      dst[i] = static_cast<T>(static_cast<Wrap<T>>(dst[i]) + static_cast<Wrap<T>>(src[i]));
    } else if constexpr (kOp == ReduceOp::kProduct) {
      dst[i] = static_cast<T>(static_cast<Wrap<T>>(dst[i]) * static_cast<Wrap<T>>(src[i]));
    } else if constexpr (kOp == ReduceOp::kMin) {
      dst[i] = src[i] < dst[i] ? src[i] : dst[i];
    } else {
      dst[i] = src[i] > dst[i] ? src[i] : dst[i];
    }
  }
}

template <typename T>
ReduceFn ForType(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return &Kernel<T, ReduceOp::kSum>;
    case ReduceOp::kProduct: return &Kernel<T, ReduceOp::kProduct>;
    case ReduceOp::kMin: return &Kernel<T, ReduceOp::kMin>;
    case ReduceOp::kMax: return &Kernel<T, ReduceOp::kMax>;
  }
  return nullptr;
}

}  // namespace

std::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProduct: return "product";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kMax: return "max";
  }
  return "unknown";
}

ReduceOp ParseReduceOp(std::string_view name) {
  if (name == "sum") return ReduceOp::kSum;
  if (name == "prod" || name == "product") return ReduceOp::kProduct;
  if (name == "min") return ReduceOp::kMin;
  if (name == "max") return ReduceOp::kMax;
  throw InvalidArgumentError("unknown reduce op '" + std::string(name) +
                             "' (expected sum, product, min or max)");
}

ReduceFn GetReduceFn(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::kFloat32: return ForType<float>(op);
    case DType::kFloat64: return ForType<double>(op);
    case DType::kInt32: return ForType<int32_t>(op);
    case DType::kInt64: return ForType<int64_t>(op);
  }
  return nullptr;
}

}  // namespace parasol
