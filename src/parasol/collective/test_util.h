// Inputs whose reductions are exact in any order, and the reference reductions, for tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "parasol/collective/topology.h"

#include "parasol/core/dtype.h"
#include "parasol/core/reduce_op.h"

namespace parasol::collective::testing {

// Rank r's input for element i, as bytes of `dtype`. Values are small integers (sum, min, max)
// or powers of two (product), so every summation order gives the same exact answer.
inline std::vector<std::byte> ExactInput(DType dtype, ReduceOp op, int rank, size_t count,
                                         uint64_t seed = 1) {
  std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(rank));
  std::vector<std::byte> out(count * DTypeSize(dtype));
  for (size_t i = 0; i < count; ++i) {
    double v = op == ReduceOp::kProduct ? (rng() % 3 == 0 ? 2.0 : (rng() % 2 ? 1.0 : -1.0))
                                        : static_cast<double>(static_cast<int>(rng() % 41) - 20);
    switch (dtype) {
      case DType::kFloat32: {
        float f = static_cast<float>(v);
        std::memcpy(&out[i * 4], &f, 4);
        break;
      }
      case DType::kFloat64: std::memcpy(&out[i * 8], &v, 8); break;
      case DType::kInt32: {
        int32_t x = static_cast<int32_t>(v);
        std::memcpy(&out[i * 4], &x, 4);
        break;
      }
      case DType::kInt64: {
        int64_t x = static_cast<int64_t>(v);
        std::memcpy(&out[i * 8], &x, 8);
        break;
      }
    }
  }
  return out;
}

// The reduction of inputs[0..n) element by element, rank 0 first.
inline std::vector<std::byte> Reference(DType dtype, ReduceOp op,
                                        const std::vector<std::vector<std::byte>>& inputs) {
  std::vector<std::byte> acc = inputs.at(0);
  ReduceFn fn = GetReduceFn(dtype, op);
  for (size_t r = 1; r < inputs.size(); ++r) fn(acc.data(), inputs[r].data(), acc.size() / DTypeSize(dtype));
  return acc;
}

// A mesh whose live nodes are n ranks, for ft-mesh: odd sizes get a hole.
inline std::shared_ptr<const Topology> MeshFor(int n) {
  struct Shape {
    const char* spec;
    std::vector<int> failed;
  };
  static const std::map<int, Shape> kShapes = {{1, {"mesh:1x1", {}}},  {2, {"mesh:1x2", {}}},
                                               {3, {"mesh:2x2", {3}}}, {4, {"mesh:2x2", {}}},
                                               {5, {"mesh:2x3", {4}}}, {8, {"mesh:3x3", {4}}}};
  const Shape& s = kShapes.at(n);
  Topology::Options o;
  o.failed = s.failed;
  return std::make_shared<Topology>(Topology::Parse(s.spec, o));
}

}  // namespace parasol::collective::testing
