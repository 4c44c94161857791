#include "parasol/core/reduce_op.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "parasol/core/enum_names.h"

namespace parasol {
namespace {

// Unsigned arithmetic so integer overflow wraps instead of being undefined.
template <typename T, bool = std::is_integral_v<T>>
struct WrapT {
  using type = T;
};
template <typename T>
struct WrapT<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Wrap = typename WrapT<T>::type;

template <typename T, ReduceOp kOp>
inline T Apply(T a, T b) {
  if constexpr (kOp == ReduceOp::kSum) {
    return static_cast<T>(static_cast<Wrap<T>>(a) + static_cast<Wrap<T>>(b));
  } else if constexpr (kOp == ReduceOp::kProduct) {
    return static_cast<T>(static_cast<Wrap<T>>(a) * static_cast<Wrap<T>>(b));
  } else if constexpr (kOp == ReduceOp::kMin) {
    return b < a ? b : a;
  } else {
    return b > a ? b : a;
  }
}

template <typename T, ReduceOp kOp>
void Kernel(void* dst_v, const void* src_v, size_t n) {
  T* __restrict dst = static_cast<T*>(dst_v);
  const T* __restrict src = static_cast<const T*>(src_v);
  for (size_t i = 0; i < n; ++i) dst[i] = Apply<T, kOp>(dst[i], src[i]);
}

// The operands keep the order of the two-operand kernel (dst op src), so both give identical bits.
template <typename T, ReduceOp kOp>
void Kernel3(void* dst_v, const void* a_v, const void* b_v, size_t n) {
  T* dst = static_cast<T*>(dst_v);
  const T* a = static_cast<const T*>(a_v);
  const T* b = static_cast<const T*>(b_v);
  for (size_t i = 0; i < n; ++i) dst[i] = Apply<T, kOp>(a[i], b[i]);
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

template <typename T>
ReduceFn3 ForType3(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return &Kernel3<T, ReduceOp::kSum>;
    case ReduceOp::kProduct: return &Kernel3<T, ReduceOp::kProduct>;
    case ReduceOp::kMin: return &Kernel3<T, ReduceOp::kMin>;
    case ReduceOp::kMax: return &Kernel3<T, ReduceOp::kMax>;
  }
  return nullptr;
}

}  // namespace

constexpr EnumName<ReduceOp> kReduceOpNames[] = {{ReduceOp::kSum, "sum"},
                                                 {ReduceOp::kProduct, "product"},
                                                 {ReduceOp::kProduct, "prod"},
                                                 {ReduceOp::kMin, "min"},
                                                 {ReduceOp::kMax, "max"}};

std::string_view ReduceOpName(ReduceOp op) { return NameOf(kReduceOpNames, op); }

ReduceOp ParseReduceOp(std::string_view name) { return ParseName(kReduceOpNames, name, "reduce op"); }

ReduceFn3 GetReduceFn3(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::kFloat32: return ForType3<float>(op);
    case DType::kFloat64: return ForType3<double>(op);
    case DType::kInt32: return ForType3<int32_t>(op);
    case DType::kInt64: return ForType3<int64_t>(op);
  }
  return nullptr;
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
