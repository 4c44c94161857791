// The values of one row: dense (a fixed-width array) or sparse (column -> value; absent means 0).
// Type-erased over the four value types; typed access is at the edge (V must match dtype()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "parasol/core/dtype.h"
#include "parasol/core/flat_map.h"
#include "parasol/core/wire.h"
#include "parasol/ps/table_config.h"

namespace parasol::ps {

class Row {
 public:
  Row() = default;
  Row(RowKind kind, DType dtype, uint64_t width);

  RowKind kind() const { return static_cast<RowKind>(data_.index() / 4); }
  DType dtype() const { return static_cast<DType>(data_.index() % 4); }

  template <typename V>
  V Get(uint64_t col) const {
    if (data_.index() < 4) return std::get<std::vector<V>>(data_)[col];
    const V* v = std::get<FlatMap<V>>(data_).Find(col);
    return v ? *v : V{};
  }
  template <typename V>
  void Add(uint64_t col, V delta) {
    if (data_.index() < 4)
      std::get<std::vector<V>>(data_)[col] += delta;
    else
      std::get<FlatMap<V>>(data_)[col] += delta;
  }
  // Dense rows: the values; nullptr for sparse rows.
  template <typename V>
  const V* DenseData() const {
    auto* v = std::get_if<std::vector<V>>(&data_);
    return v ? v->data() : nullptr;
  }
  template <typename V>
  V* MutableDenseData() {
    auto* v = std::get_if<std::vector<V>>(&data_);
    return v ? v->data() : nullptr;
  }
  // Dense rows: the values as bytes; empty for sparse rows.
  std::span<const std::byte> DenseBytes() const;
  std::span<std::byte> MutableDenseBytes();
  template <typename V>
  const FlatMap<V>* SparseData() const {
    return std::get_if<FlatMap<V>>(&data_);
  }

  // REQUIRES: same kind and dtype (and width, if dense).
  void AddRow(const Row& delta);
  // Sum of absolute values (VAP's magnitude of unsent updates).
  double L1() const;
  // Number of stored entries (dense: the width).
  uint64_t entries() const;
  void Clear();

  // Wire form (kind and dtype are known from the table): dense [width, values], sparse
  // [count, (col, value)...]. Decode checks sizes against the table's width.
  void Encode(WireWriter& w) const;
  static Row Decode(WireReader& r, RowKind kind, DType dtype, uint64_t width);
  // Dense rows: decodes over this row's values without allocating; nothing changes if the data
  // is malformed (it throws first). REQUIRES: a dense row of the table's width.
  void DecodeDenseInPlace(WireReader& r);

 private:
  std::variant<std::vector<float>, std::vector<double>, std::vector<int32_t>, std::vector<int64_t>,
               FlatMap<float>, FlatMap<double>, FlatMap<int32_t>, FlatMap<int64_t>>
      data_;
};

}  // namespace parasol::ps
