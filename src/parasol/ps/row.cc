#include "parasol/ps/row.h"

#include <cmath>

#include <fmt/format.h>

namespace parasol::ps {

namespace {

template <typename V>
void Emplace(auto& data, RowKind kind, uint64_t width) {
  if (kind == RowKind::kDense)
    data.template emplace<std::vector<V>>(width, V{});
  else
    data.template emplace<FlatMap<V>>();
}

}  // namespace

Row::Row(RowKind kind, DType dtype, uint64_t width) {
  switch (dtype) {
    case DType::kFloat32: Emplace<float>(data_, kind, width); break;
    case DType::kFloat64: Emplace<double>(data_, kind, width); break;
    case DType::kInt32: Emplace<int32_t>(data_, kind, width); break;
    case DType::kInt64: Emplace<int64_t>(data_, kind, width); break;
  }
}

void Row::AddRow(const Row& delta) {
  std::visit(
      [&](auto& mine) {
        using T = std::decay_t<decltype(mine)>;
        const T& theirs = std::get<T>(delta.data_);
        if constexpr (requires { mine.data(); }) {
          for (size_t i = 0; i < mine.size(); ++i) mine[i] += theirs[i];
        } else {
          theirs.ForEach([&](uint64_t col, const auto& v) { mine[col] += v; });
        }
      },
      data_);
}

double Row::L1() const {
  double sum = 0;
  std::visit(
      [&](const auto& d) {
        if constexpr (requires { d.data(); }) {
          for (auto v : d) sum += std::fabs(static_cast<double>(v));
        } else {
          d.ForEach([&](uint64_t, const auto& v) { sum += std::fabs(static_cast<double>(v)); });
        }
      },
      data_);
  return sum;
}

std::span<const std::byte> Row::DenseBytes() const {
  return std::visit(
      [](const auto& d) -> std::span<const std::byte> {
        if constexpr (requires { d.data(); }) return std::as_bytes(std::span(d));
        return {};
      },
      data_);
}

std::span<std::byte> Row::MutableDenseBytes() {
  return std::visit(
      [](auto& d) -> std::span<std::byte> {
        if constexpr (requires { d.data(); }) return std::as_writable_bytes(std::span(d));
        return {};
      },
      data_);
}

uint64_t Row::entries() const {
  return std::visit([](const auto& d) -> uint64_t { return d.size(); }, data_);
}

void Row::Clear() {
  std::visit(
      [](auto& d) {
        if constexpr (requires { d.data(); }) {
          std::fill(d.begin(), d.end(), typename std::decay_t<decltype(d)>::value_type{});
        } else {
          d.Clear();
        }
      },
      data_);
}

void Row::Encode(WireWriter& w) const {
  std::visit(
      [&](const auto& d) {
        if constexpr (requires { d.data(); }) {
          w.Put<uint64_t>(d.size());
          w.PutBytes(d.data(), d.size() * sizeof(d[0]));
        } else {
          w.Put<uint64_t>(d.size());
          d.ForEach([&](uint64_t col, const auto& v) {
            w.Put<uint64_t>(col);
            w.Put(v);
          });
        }
      },
      data_);
}

Row Row::Decode(WireReader& r, RowKind kind, DType dtype, uint64_t width) {
  Row row(kind, dtype, kind == RowKind::kDense ? 0 : width);
  uint64_t n = r.Get<uint64_t>();
  std::visit(
      [&](auto& d) {
        if constexpr (requires { d.data(); }) {
          if (n != width) r.Fail(fmt::format("dense row of {} values where the table has {}", n, width));
          d.resize(n);
          r.GetBytes(d.data(), n * sizeof(d[0]));
        } else {
          using V = std::decay_t<decltype(*d.Find(0))>;
          if (n > r.remaining() / (8 + sizeof(V))) r.Fail("sparse row longer than the message");
          for (uint64_t i = 0; i < n; ++i) {
            auto col = r.Get<uint64_t>();
            if (width != 0 && col >= width)
              r.Fail(fmt::format("column {} of a table of width {}", col, width));
            if (col == FlatMap<V>::kEmpty) r.Fail("reserved column id");
            d[col] += r.Get<V>();
          }
        }
      },
      row.data_);
  return row;
}

void Row::DecodeDenseInPlace(WireReader& r) {
  std::visit(
      [&](auto& d) {
        if constexpr (requires { d.data(); }) {
          uint64_t n = r.Get<uint64_t>();
          if (n != d.size())
            r.Fail(fmt::format("dense row of {} values where the table has {}", n, d.size()));
          r.GetBytes(d.data(), n * sizeof(d[0]));
        } else {
          r.Fail("in-place decoding of a sparse row");
        }
      },
      data_);
}

}  // namespace parasol::ps
