#include "parasol/data/dataset.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "parasol/core/checksum.h"
#include "parasol/core/error.h"
#include "parasol/data/csv_design.h"
#include "parasol/data/libsvm_reader.h"

namespace parasol::data {

void Dataset::AddRow(double label, std::span<const uint32_t> ids, std::span<const double> vals) {
  assert(ids.size() == vals.size());
  indices.insert(indices.end(), ids.begin(), ids.end());
  values.insert(values.end(), vals.begin(), vals.end());
  row_offsets.push_back(indices.size());
  labels.push_back(label);
  if (!ids.empty()) cols = std::max<uint64_t>(cols, uint64_t{ids.back()} + 1);
}

int64_t ColumnMatrix::ColumnOf(uint32_t id) const {
  auto it = std::lower_bound(ids.begin(), ids.end(), id);
  return it != ids.end() && *it == id ? it - ids.begin() : -1;
}

uint64_t Fingerprint(const Dataset& d) {
  uint64_t h = Fnv1a64(&d.cols, sizeof(d.cols));
  h = Fnv1a64(d.row_offsets.data(), d.row_offsets.size() * sizeof(uint64_t), h);
  h = Fnv1a64(d.indices.data(), d.indices.size() * sizeof(uint32_t), h);
  h = Fnv1a64(d.values.data(), d.values.size() * sizeof(double), h);
  return Fnv1a64(d.labels.data(), d.labels.size() * sizeof(double), h);
}

namespace {

// A table indexed by feature id is sized by what was read while the ids are not much sparser than
// the entries; past that (a file may name feature 2,000,000,000 once) the ids are searched.
bool IdTableFits(uint64_t top_id, const Dataset& d) { return top_id <= 4 * d.indices.size() + 1024; }

}  // namespace

std::vector<uint32_t> UsedFeatures(const Dataset& d) {
  if (d.indices.empty()) return {};
  const uint32_t top = *std::max_element(d.indices.begin(), d.indices.end());
  if (!IdTableFits(top, d)) {  // ids much sparser than the entries: sort them
    std::vector<uint32_t> ids(d.indices);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
  }
  std::vector<uint8_t> seen(size_t{top} + 1, 0);  // bounded by the entries read
  for (uint32_t id : d.indices) seen[id] = 1;
  std::vector<uint32_t> ids;
  for (size_t id = 0; id < seen.size(); ++id) {
    if (seen[id]) ids.push_back(static_cast<uint32_t>(id));
  }
  return ids;
}

double MaxAbsTransposeProduct(const Dataset& d, std::span<const double> u) {
  assert(u.size() == d.rows());
  if (d.indices.empty()) return 0;
  // One sum per feature: indexed by id when the ids are not much sparser than the entries (the
  // size is then bounded by what was read), else by the id's place among the used features.
  const uint32_t top = *std::max_element(d.indices.begin(), d.indices.end());
  const bool by_id = IdTableFits(top, d);
  const std::vector<uint32_t> ids = by_id ? std::vector<uint32_t>{} : UsedFeatures(d);
  std::vector<double> sums(by_id ? size_t{top} + 1 : ids.size(), 0.0);
  for (size_t r = 0; r < d.rows(); ++r) {
    for (uint64_t i = d.row_offsets[r]; i < d.row_offsets[r + 1]; ++i) {
      const uint32_t id = d.indices[i];
      const size_t at =
          by_id ? id : static_cast<size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
      sums[at] += d.values[i] * u[r];
    }
  }
  double most = 0;
  for (double s : sums) most = std::max(most, std::abs(s));
  return most;
}

namespace {

// Every row of [row_begin, row_end) holds all `columns` features (so exactly the ids asked for).
bool AllDense(const Dataset& d, size_t row_begin, size_t row_end, size_t columns) {
  for (size_t r = row_begin; r < row_end; ++r) {
    if (d.row_offsets[r + 1] - d.row_offsets[r] != columns) return false;
  }
  return columns > 0;
}

// The columns of dense rows: a transpose in tiles. Entry by entry, each entry of a row writes
// another cache line and the next row comes back to it only after every other column
// (riboflavin, 71 x 4,088: 10-20 ns an entry, as long as all of the Lasso's updates).
void DenseToColumns(const Dataset& d, size_t row_begin, ColumnMatrix& m) {
  constexpr size_t kTile = 16;
  const size_t rows = m.rows, cols = m.ids.size();
  m.col_offsets.resize(cols + 1);
  for (size_t c = 0; c <= cols; ++c) m.col_offsets[c] = c * rows;
  m.row_ids.resize(rows * cols);
  m.values.resize(rows * cols);
  for (size_t c = 0; c < cols; ++c)
    std::iota(m.row_ids.begin() + c * rows, m.row_ids.begin() + (c + 1) * rows, 0);
  const double* in = d.values.data() + d.row_offsets[row_begin];
  for (size_t r0 = 0; r0 < rows; r0 += kTile) {
    for (size_t c0 = 0; c0 < cols; c0 += kTile) {
      for (size_t r = r0; r < std::min(rows, r0 + kTile); ++r) {
        for (size_t c = c0; c < std::min(cols, c0 + kTile); ++c) m.values[c * rows + r] = in[r * cols + c];
      }
    }
  }
}

}  // namespace

ColumnMatrix ToColumns(const Dataset& d, size_t row_begin, size_t row_end, std::vector<uint32_t> ids) {
  ColumnMatrix m;
  m.rows = row_end - row_begin;
  const uint64_t b = d.row_offsets[row_begin], e = d.row_offsets[row_end];
  m.ids = std::move(ids);
  if (AllDense(d, row_begin, row_end, m.ids.size())) {
    DenseToColumns(d, row_begin, m);
    return m;
  }
  // Feature id -> column: a table when the ids are not much sparser than the entries (its size is
  // then bounded by what was read), a binary search otherwise.
  std::vector<uint32_t> table;
  if (!m.ids.empty() && IdTableFits(m.ids.back(), d)) {
    table.assign(size_t{m.ids.back()} + 1, 0);
    for (size_t c = 0; c < m.ids.size(); ++c) table[m.ids[c]] = static_cast<uint32_t>(c);
  }
  auto column = [&](uint32_t id) {
    const int64_t c = table.empty() ? m.ColumnOf(id) : table[id];
    assert(c >= 0 && m.ids[static_cast<size_t>(c)] == id);
    return static_cast<size_t>(c);
  };
  // Counting sort of the entries by column: sized by the entries, never by the feature ids.
  std::vector<uint64_t> next(m.ids.size() + 1, 0);
  for (uint64_t i = b; i < e; ++i) ++next[column(d.indices[i]) + 1];
  for (size_t c = 1; c < next.size(); ++c) next[c] += next[c - 1];
  m.col_offsets = next;
  m.row_ids.resize(e - b);
  m.values.resize(e - b);
  for (size_t r = row_begin; r < row_end; ++r) {
    for (uint64_t i = d.row_offsets[r]; i < d.row_offsets[r + 1]; ++i) {
      const uint64_t at = next[column(d.indices[i])]++;
      m.row_ids[at] = static_cast<uint32_t>(r - row_begin);
      m.values[at] = d.values[i];
    }
  }
  return m;
}

double ColumnMatrix::Dot(size_t c, std::span<const double> v) const {
  assert(v.size() == rows);
  const uint64_t b = col_offsets[c], e = col_offsets[c + 1];
  const double* x = values.data() + b;
  double dot = 0;
  if (e - b == rows) {  // dense: rows 0..rows-1 in order
    // Four sums, so that the loop vectorises (one sum is a chain of dependent adds).
    double s[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= rows; i += 4) {
      for (size_t k = 0; k < 4; ++k) s[k] += x[i + k] * v[i + k];
    }
    for (; i < rows; ++i) dot += x[i] * v[i];
    return dot + ((s[0] + s[1]) + (s[2] + s[3]));
  }
  // Four sums here too: with one, each gathered product waits for the last add (a9a's L1 logistic
  // regression spent half its updates' time so).
  const uint32_t* at = row_ids.data() + b;
  double s[4] = {0, 0, 0, 0};
  uint64_t k = 0;
  for (; k + 4 <= e - b; k += 4) {
    for (uint64_t q = 0; q < 4; ++q) s[q] += x[k + q] * v[at[k + q]];
  }
  for (; k < e - b; ++k) dot += x[k] * v[at[k]];
  return dot + ((s[0] + s[1]) + (s[2] + s[3]));
}

double ColumnMatrix::Dot(size_t c, std::span<const double> u, std::span<const double> v) const {
  assert(u.size() == rows && v.size() == rows);
  const uint64_t b = col_offsets[c], e = col_offsets[c + 1];
  const double* x = values.data() + b;
  double s[4] = {0, 0, 0, 0}, dot = 0;
  uint64_t k = 0;
  if (e - b == rows) {  // dense: rows 0..rows-1 in order
    for (; k + 4 <= rows; k += 4) {
      for (uint64_t q = 0; q < 4; ++q) s[q] += x[k + q] * u[k + q] * v[k + q];
    }
    for (; k < rows; ++k) dot += x[k] * u[k] * v[k];
  } else {
    const uint32_t* at = row_ids.data() + b;
    for (; k + 4 <= e - b; k += 4) {
      for (uint64_t q = 0; q < 4; ++q) s[q] += x[k + q] * u[at[k + q]] * v[at[k + q]];
    }
    for (; k < e - b; ++k) dot += x[k] * u[at[k]] * v[at[k]];
  }
  return dot + ((s[0] + s[1]) + (s[2] + s[3]));
}

void ColumnMatrix::TransposeProduct(std::span<const double> v, std::span<double> out) const {
  assert(v.size() == rows && out.size() == cols());
  size_t c = 0;
  // Four dense columns lie one after another: each row's value of v serves all four, and the
  // sums of two rows at a time are packed operations.
  for (; c + 4 <= cols() && col_offsets[c + 4] - col_offsets[c] == 4 * rows; c += 4) {
    const double* x = values.data() + col_offsets[c];
    double s[4][2] = {};
    size_t i = 0;
    for (; i + 2 <= rows; i += 2) {
      for (size_t k = 0; k < 4; ++k) {
        for (size_t q = 0; q < 2; ++q) s[k][q] += x[k * rows + i + q] * v[i + q];
      }
    }
    for (size_t k = 0; k < 4; ++k) {
      double last = i < rows ? x[k * rows + i] * v[i] : 0.0;
      out[c + k] = s[k][0] + s[k][1] + last;
    }
  }
  for (; c < cols(); ++c) out[c] = Dot(c, v);
}

ColumnMatrix::Moments ColumnMatrix::ColumnMoments(size_t c) const {
  // Four sums of each, as in Dot: with one, each add waits for the last (riboflavin's 4,088 columns
  // of 71 took 1 ms, a sixth of the Lasso's solver).
  const double* x = values.data() + col_offsets[c];
  const uint64_t n = col_offsets[c + 1] - col_offsets[c];
  double s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
  uint64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    for (uint64_t i = 0; i < 4; ++i) s[i] += x[k + i], q[i] += x[k + i] * x[k + i];
  }
  Moments m;
  for (; k < n; ++k) m.sum += x[k], m.squares += x[k] * x[k];
  m.sum += (s[0] + s[1]) + (s[2] + s[3]);
  m.squares += (q[0] + q[1]) + (q[2] + q[3]);
  return m;
}

void ColumnMatrix::AddTo(size_t c, double a, std::span<double> v) const {
  assert(v.size() == rows);
  const uint64_t b = col_offsets[c], e = col_offsets[c + 1];
  const double* x = values.data() + b;
  if (e - b == rows) {
    for (size_t i = 0; i < rows; ++i) v[i] += a * x[i];
    return;
  }
  const uint32_t* at = row_ids.data() + b;
  for (uint64_t k = 0; k < e - b; ++k) v[at[k]] += a * x[k];
}

double ColumnMatrix::ColumnDot(size_t a, size_t b) const {
  uint64_t i = col_offsets[a], ie = col_offsets[a + 1];
  uint64_t j = col_offsets[b], je = col_offsets[b + 1];
  double dot = 0;
  if (ie - i == rows && je - j == rows) {  // both dense: rows in the same order
    for (; i < ie; ++i, ++j) dot += values[i] * values[j];
    return dot;
  }
  while (i < ie && j < je) {
    if (row_ids[i] < row_ids[j]) {
      ++i;
    } else if (row_ids[j] < row_ids[i]) {
      ++j;
    } else {
      dot += values[i++] * values[j++];
    }
  }
  return dot;
}

ColumnMatrix SliceRows(const ColumnMatrix& m, size_t row_begin, size_t row_end) {
  ColumnMatrix out;
  out.rows = row_end - row_begin;
  out.ids = m.ids;
  out.col_offsets.assign(m.cols() + 1, 0);
  std::vector<std::pair<uint64_t, uint64_t>> ranges(m.cols());
  for (size_t c = 0; c < m.cols(); ++c) {
    const auto first = m.row_ids.begin() + static_cast<ptrdiff_t>(m.col_offsets[c]);
    const auto last = m.row_ids.begin() + static_cast<ptrdiff_t>(m.col_offsets[c + 1]);
    const auto lo = std::lower_bound(first, last, static_cast<uint32_t>(row_begin));
    const auto hi = std::lower_bound(lo, last, static_cast<uint32_t>(row_end));
    ranges[c] = {static_cast<uint64_t>(lo - m.row_ids.begin()),
                 static_cast<uint64_t>(hi - m.row_ids.begin())};
    out.col_offsets[c + 1] = out.col_offsets[c] + (ranges[c].second - ranges[c].first);
  }
  out.row_ids.resize(out.col_offsets.back());
  out.values.resize(out.col_offsets.back());
  for (size_t c = 0; c < m.cols(); ++c) {
    uint64_t at = out.col_offsets[c];
    for (uint64_t e = ranges[c].first; e < ranges[c].second; ++e, ++at) {
      out.row_ids[at] = static_cast<uint32_t>(m.row_ids[e] - row_begin);
      out.values[at] = m.values[e];
    }
  }
  return out;
}

std::shared_ptr<const ColumnMatrix> SliceRows(const std::shared_ptr<const ColumnMatrix>& m, size_t row_begin,
                                              size_t row_end) {
  if (row_begin == 0 && row_end == m->rows) return m;
  return std::make_shared<const ColumnMatrix>(SliceRows(*m, row_begin, row_end));
}

Dataset ReadDataset(const std::string& path, const std::string& label_column) {
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  return csv ? ReadCsvDesign(path, label_column) : ReadLibsvm(path);
}

size_t CountCorrect(const Dataset& d, std::span<const double> predicted) {
  if (predicted.size() != d.rows()) {
    throw InvalidArgumentError(fmt::format("{} predictions for {} rows", predicted.size(), d.rows()));
  }
  size_t right = 0;
  for (size_t r = 0; r < d.rows(); ++r) right += predicted[r] == d.labels[r];
  return right;
}

}  // namespace parasol::data
