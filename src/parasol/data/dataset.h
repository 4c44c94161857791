// A labelled design matrix: the samples and features that the linear models (Lasso, logistic
// regression, SVM) read, whatever file they came from.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace parasol::data {

// n rows (samples) by `cols` features, sparse and row-major (CSR), with one label per row.
// Feature ids are 0-based and strictly ascending within a row. `cols` is only a bound on the ids:
// nothing is ever allocated by it (a file may name feature 2,000,000,000 once).
struct Dataset {
  uint64_t cols = 0;
  std::vector<uint64_t> row_offsets{0};
  std::vector<uint32_t> indices;
  std::vector<double> values;
  std::vector<double> labels;

  size_t rows() const { return labels.size(); }
  uint64_t nonzeros() const { return indices.size(); }
  // REQUIRES: ids ascending, ids.size() == vals.size().
  void AddRow(double label, std::span<const uint32_t> ids, std::span<const double> vals);
  std::span<const uint32_t> row_indices(size_t r) const {
    return {indices.data() + row_offsets[r], indices.data() + row_offsets[r + 1]};
  }
  std::span<const double> row_values(size_t r) const {
    return {values.data() + row_offsets[r], values.data() + row_offsets[r + 1]};
  }
};

// Rows [row_begin, row_end) of a data set, column-major (CSC) over a list of feature ids:
// coordinate methods walk one feature's entries at a time. Row ids are local (0 is row_begin);
// `ids` maps a column here to the data set's feature id.
struct ColumnMatrix {
  size_t rows = 0;
  std::vector<uint32_t> ids;          // ascending
  std::vector<uint64_t> col_offsets;  // ids.size() + 1
  std::vector<uint32_t> row_ids;
  std::vector<double> values;

  size_t cols() const { return ids.size(); }
  // The column holding feature `id`, or -1 if no row here has it.
  int64_t ColumnOf(uint32_t id) const;
  // The dot product of columns a and b (a merge of their ascending rows; a plain loop when both
  // are dense).
  double ColumnDot(size_t a, size_t b) const;
  // Column c's dot product with v (one value per row), and v += a * column c: a dense column
  // (every row) is a plain loop the compiler vectorises, a sparse one gathers by row id.
  double Dot(size_t c, std::span<const double> v) const;
  void AddTo(size_t c, double a, std::span<double> v) const;
  // Column c's dot product with the product of u and v, row by row (a weighted dot product).
  double Dot(size_t c, std::span<const double> u, std::span<const double> v) const;
  // out[c] = column c . v for every column (X'v). Dense columns four at a time: riboflavin's
  // 4,088 columns of 71 one by one took 0.19 ms, a call and a reduction a column.
  void TransposeProduct(std::span<const double> v, std::span<double> out) const;
  // The sum of column c's values and the sum of their squares.
  struct Moments {
    double sum = 0, squares = 0;
  };
  Moments ColumnMoments(size_t c) const;
};

// The features that occur in the data set, ascending (sized by the entries, not by `cols`).
std::vector<uint32_t> UsedFeatures(const Dataset& d);

// max_j |x_j . u|, the largest entry of X'u for one weight per row (u.size() == d.rows()): what a
// penalised model's lambda_max is. Summed row by row, without forming the columns.
double MaxAbsTransposeProduct(const Dataset& d, std::span<const double> u);

// REQUIRES: `ids` ascending and holding every feature of the rows (UsedFeatures(d) does).
ColumnMatrix ToColumns(const Dataset& d, size_t row_begin, size_t row_end, std::vector<uint32_t> ids);

// Rows [row_begin, row_end) of `m`, with the same columns: cheaper than ToColumns again (each
// column's rows ascend, so its slice is found by binary search and copied).
ColumnMatrix SliceRows(const ColumnMatrix& m, size_t row_begin, size_t row_end);

// The same, shared: `m` itself when the rows are all of its rows (one process of one worker copies
// nothing).
std::shared_ptr<const ColumnMatrix> SliceRows(const std::shared_ptr<const ColumnMatrix>& m, size_t row_begin,
                                              size_t row_end);

// A checksum of the rows (labels, features, values): a checkpoint records it, so that a resume on
// other data is refused.
uint64_t Fingerprint(const Dataset& d);

// How many rows' labels `predicted` gets exactly (one prediction per row): a classifier's test
// accuracy is CountCorrect / rows.
size_t CountCorrect(const Dataset& d, std::span<const double> predicted);

// Reads a data set by its file name: "NAME.csv" as a CSV with a header and a label column named
// `label_column`, anything else as LIBSVM. Errors as the readers'.
Dataset ReadDataset(const std::string& path, const std::string& label_column = "y");

}  // namespace parasol::data
