#include "parasol/data/dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
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
  }
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
