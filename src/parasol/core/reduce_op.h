// Reduction operators and their type-erased kernels: dst[i] = dst[i] (op) src[i].
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parasol/core/dtype.h"

namespace parasol {

enum class ReduceOp : uint8_t { kSum = 0, kProduct = 1, kMin = 2, kMax = 3 };
inline constexpr int kNumReduceOps = 4;

std::string_view ReduceOpName(ReduceOp op);
// Accepts "sum", "prod"/"product", "min", "max". Throws InvalidArgumentError otherwise.
ReduceOp ParseReduceOp(std::string_view name);

// dst[i] = dst[i] op src[i] for i < count. dst and src must not overlap.
// Integer sums and products wrap around (two's complement) instead of overflowing.
using ReduceFn = void (*)(void* dst, const void* src, size_t count);
ReduceFn GetReduceFn(DType dtype, ReduceOp op);

// dst[i] = a[i] op b[i]: reduce into a third buffer in one pass (dst may alias a or b).
using ReduceFn3 = void (*)(void* dst, const void* a, const void* b, size_t count);
ReduceFn3 GetReduceFn3(DType dtype, ReduceOp op);

}  // namespace parasol
