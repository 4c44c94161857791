#include "parasol/data/dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "parasol/core/error.h"
#include "parasol/data/design_generator.h"
#include "parasol/data/libsvm_reader.h"
#include "parasol/data/testing.h"

namespace parasol::data {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A feature index near 2^31 is legal and must not make anything allocate by it.
TEST_F(DataFiles, HugeFeatureIdsAllocateNothing) {
  Dataset d = ReadLibsvm(Write("h.svm", "1 3:1 2000000000:2\n-1 3:4\n"));
  EXPECT_EQ(d.cols, 2000000000u);
  ColumnMatrix m = ToColumns(d, 0, 2, UsedFeatures(d));
  EXPECT_EQ(m.ids, (std::vector<uint32_t>{2, 1999999999}));
  EXPECT_EQ(m.col_offsets, (std::vector<uint64_t>{0, 2, 3}));
  EXPECT_EQ(m.row_ids, (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(m.values, (std::vector<double>{1, 4, 2}));
}

// A row range sliced from the whole column view equals the view built for that range; the used
// features are the set of indices that occur.
TEST_F(DataFiles, SlicedRowsMatchColumnsBuiltForThem) {
  Design g = GenerateDesign({.rows = 200, .cols = 300, .block_size = 5, .blocks_per_row = 6, .seed = 4});
  const std::vector<uint32_t> ids = UsedFeatures(g.data);
  const std::set<uint32_t> occurring(g.data.indices.begin(), g.data.indices.end());
  EXPECT_EQ(ids, std::vector<uint32_t>(occurring.begin(), occurring.end()));
  const ColumnMatrix all = ToColumns(g.data, 0, 200, ids);
  for (auto [b, e] : {std::pair<size_t, size_t>{0, 200}, {0, 67}, {67, 133}, {133, 200}, {50, 50}}) {
    const ColumnMatrix direct = ToColumns(g.data, b, e, ids);
    const ColumnMatrix sliced = SliceRows(all, b, e);
    EXPECT_EQ(sliced.rows, direct.rows);
    EXPECT_EQ(sliced.ids, direct.ids);
    EXPECT_EQ(sliced.col_offsets, direct.col_offsets) << b << "-" << e;
    EXPECT_EQ(sliced.row_ids, direct.row_ids) << b << "-" << e;
    EXPECT_EQ(sliced.values, direct.values) << b << "-" << e;
    // Shared: a slice of every row is the matrix itself, any other a copy equal to the slice.
    const auto shared = std::make_shared<const ColumnMatrix>(all);
    const std::shared_ptr<const ColumnMatrix> part = SliceRows(shared, b, e);
    EXPECT_EQ(part == shared, b == 0 && e == 200) << b << "-" << e;
    EXPECT_EQ(part->row_ids, direct.row_ids) << b << "-" << e;
    EXPECT_EQ(part->values, direct.values) << b << "-" << e;
  }
}

// Rows holding every feature are transposed in tiles: the same columns as entry by entry, for the
// whole range and for a dense range of a data set whose first row is sparse.
TEST_F(DataFiles, DenseRowsTransposeToTheirColumns) {
  const Dataset d = ReadLibsvm(Write("d.svm", "1 2:9\n1 1:1 2:2\n1 1:3 2:4\n1 1:5 2:6\n"));
  const ColumnMatrix m = ToColumns(d, 1, 4, {0, 1});
  EXPECT_EQ(m.col_offsets, (std::vector<uint64_t>{0, 3, 6}));
  EXPECT_EQ(m.row_ids, (std::vector<uint32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(m.values, (std::vector<double>{1, 3, 5, 2, 4, 6}));
  const ColumnMatrix all = ToColumns(d, 0, 4, {0, 1});
  EXPECT_EQ(all.col_offsets, (std::vector<uint64_t>{0, 3, 7}));
  EXPECT_EQ(all.values, (std::vector<double>{1, 3, 5, 9, 2, 4, 6}));
  // 40 x 37 dense (tiles of 16 and partial ones): entry (r, c) = r * 100 + c.
  Dataset big;
  std::vector<uint32_t> ids(37);
  std::vector<double> row(37);
  for (uint32_t c = 0; c < 37; ++c) ids[c] = c;
  for (int r = 0; r < 40; ++r) {
    for (int c = 0; c < 37; ++c) row[static_cast<size_t>(c)] = r * 100 + c;
    big.AddRow(0, ids, row);
  }
  const ColumnMatrix t = ToColumns(big, 0, 40, ids);
  for (size_t c = 0; c < 37; ++c) {
    for (size_t r = 0; r < 40; ++r) {
      ASSERT_EQ(t.values[t.col_offsets[c] + r], static_cast<double>(r * 100 + c)) << r << "," << c;
      ASSERT_EQ(t.row_ids[t.col_offsets[c] + r], r);
    }
  }
}

// Column 0 of [[1, 0], [2, 3], [4, 5]] is dense (every row), column 1 sparse: dot products and
// v += a x_c by hand.
TEST_F(DataFiles, ColumnDotAndAddToReadDenseAndSparseColumns) {
  const Dataset d = ReadLibsvm(Write("c.svm", "1 1:1\n1 1:2 2:3\n1 1:4 2:5\n"));
  const ColumnMatrix m = ToColumns(d, 0, 3, UsedFeatures(d));
  const std::vector<double> v{1, 10, 100};
  EXPECT_DOUBLE_EQ(m.Dot(0, v), 1 + 20 + 400);
  EXPECT_DOUBLE_EQ(m.Dot(1, v), 30 + 500);
  std::vector<double> sum{1, 1, 1};
  m.AddTo(0, 2, sum);
  m.AddTo(1, -1, sum);
  EXPECT_EQ(sum, (std::vector<double>{3, 2, 4}));
}

// Seven rows as LIBSVM text: feature 1 holds i + 1 in row i, feature 2 holds 10 (i + 1) in every
// row but row 3.
std::string SevenRows() {
  std::string text;
  for (int i = 0; i < 7; ++i) {
    text += "1 1:" + std::to_string(i + 1);
    if (i != 3) text += " 2:" + std::to_string(10 * (i + 1));
    text += "\n";
  }
  return text;
}

// Seven rows (the four-way sums and their remainder both run): column 0 holds i + 1 in every row
// i, column 1 holds 10 (i + 1) in every row but row 3. With u_i = i + 1 and v = 1 but v_6 = 2:
// x_0.u = 1 + 4 + ... + 49 = 140, and the product weighted by v adds 49 more; x_1.u =
// 10 (140 - 16) = 1240, and weighted 490 more.
TEST_F(DataFiles, WeightedDotSumsColumnTimesBothVectors) {
  const Dataset d = ReadLibsvm(Write("w.svm", SevenRows()));
  const ColumnMatrix m = ToColumns(d, 0, 7, UsedFeatures(d));
  const std::vector<double> u{1, 2, 3, 4, 5, 6, 7}, v{1, 1, 1, 1, 1, 1, 2};
  EXPECT_DOUBLE_EQ(m.Dot(0, u), 140);
  EXPECT_DOUBLE_EQ(m.Dot(0, u, v), 189);
  EXPECT_DOUBLE_EQ(m.Dot(1, u), 1240);
  EXPECT_DOUBLE_EQ(m.Dot(1, u, v), 1730);
}

// X'v by hand, five rows: columns 0-4 hold (r + 1)(c + 1) in every row r (four of them a dense
// block, one after it alone), column 5 holds 7 in rows 0 and 3 only. With v_r = r + 1, column c
// gives (c + 1)(1 + 4 + 9 + 16 + 25) = 55 (c + 1), column 5 gives 7 (1 + 4) = 35.
TEST_F(DataFiles, TransposeProductMultipliesEveryColumn) {
  std::string text;
  for (int r = 0; r < 5; ++r) {
    text += "1";
    for (int c = 0; c < 5; ++c) text += " " + std::to_string(c + 1) + ":" + std::to_string((r + 1) * (c + 1));
    if (r == 0 || r == 3) text += " 6:7";
    text += "\n";
  }
  const Dataset d = ReadLibsvm(Write("t.svm", text));
  const ColumnMatrix m = ToColumns(d, 0, 5, UsedFeatures(d));
  const std::vector<double> v{1, 2, 3, 4, 5};
  std::vector<double> out(6);
  m.TransposeProduct(v, out);
  EXPECT_EQ(out, (std::vector<double>{55, 110, 165, 220, 275, 35}));
}

// The same seven rows: column 0 sums 1 + ... + 7 = 28, its squares 140; column 1 (six rows, the
// four-way sums and a remainder of two) 10 (28 - 4) = 240 and 100 (140 - 16) = 12,400.
TEST_F(DataFiles, ColumnMomentsSumValuesAndSquares) {
  const Dataset d = ReadLibsvm(Write("m.svm", SevenRows()));
  const ColumnMatrix m = ToColumns(d, 0, 7, UsedFeatures(d));
  EXPECT_DOUBLE_EQ(m.ColumnMoments(0).sum, 28);
  EXPECT_DOUBLE_EQ(m.ColumnMoments(0).squares, 140);
  EXPECT_DOUBLE_EQ(m.ColumnMoments(1).sum, 240);
  EXPECT_DOUBLE_EQ(m.ColumnMoments(1).squares, 12400);
}

// X'u by hand: feature 3 gets 1 * 0.5 + 4 * -2 = -7.5, feature 2,000,000,000 gets 2 * 0.5 = 1, so
// the largest magnitude is 7.5; the same with small ids (summed by id, not by the sorted ids).
TEST_F(DataFiles, MaxAbsTransposeProductSumsEachFeatureOverTheRows) {
  const std::vector<double> u{0.5, -2};
  EXPECT_DOUBLE_EQ(MaxAbsTransposeProduct(ReadLibsvm(Write("h.svm", "1 3:1 2000000000:2\n-1 3:4\n")), u),
                   7.5);
  EXPECT_DOUBLE_EQ(MaxAbsTransposeProduct(ReadLibsvm(Write("s.svm", "1 3:1 5:20\n-1 3:4 5:1\n")), u), 8.0);
}

TEST(CountCorrect, CountsExactLabelMatchesAndRefusesAWrongLength) {
  Dataset d;
  for (double label : {1.0, -1.0, 3.0, 3.0}) d.AddRow(label, {}, {});
  EXPECT_EQ(CountCorrect(d, std::vector<double>{1.0, 1.0, 3.0, 2.0}), 2u);
  EXPECT_EQ(CountCorrect(d, std::vector<double>{1.0, -1.0, 3.0, 3.0}), 4u);
  EXPECT_THROW(CountCorrect(d, std::vector<double>{1.0}), InvalidArgumentError);
}

TEST(BundledData, ReadsRealFiles) {
  Dataset housing = ReadDataset(std::string(PARASOL_DATA_DIR) + "/libsvm/housing_scale");
  EXPECT_EQ(housing.rows(), 506u);
  EXPECT_EQ(housing.cols, 13u);
  EXPECT_EQ(housing.labels[0], 24);
  Dataset ribo = ReadDataset(std::string(PARASOL_DATA_DIR) + "/riboflavin/riboflavin-500.csv");
  EXPECT_EQ(ribo.rows(), 71u);
  EXPECT_EQ(ribo.cols, 500u);
  EXPECT_EQ(ribo.nonzeros(), 71u * 500u);  // gene expressions: dense
}

}  // namespace
}  // namespace parasol::data
