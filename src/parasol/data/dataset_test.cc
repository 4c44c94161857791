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
#include "parasol/data/csv_design.h"
#include "parasol/data/design_generator.h"
#include "parasol/data/libsvm_reader.h"

namespace parasol::data {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class DataFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("parasol_data_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  template <typename Fn>
  std::string ErrorOf(Fn fn) {
    try {
      fn();
    } catch (const ParseError& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path dir_;
};

TEST_F(DataFiles, ReadsLibsvm) {
  const std::string path =
      Write("a.svm", "# a comment\n+1 1:0.5 3:-2 7:1e-3\n\n-1 2:4 # trailing\r\n0.25\n3 5:0 6:1\n");
  Dataset d = ReadLibsvm(path);
  ASSERT_EQ(d.rows(), 4u);
  EXPECT_EQ(d.labels, (std::vector<double>{1, -1, 0.25, 3}));
  EXPECT_EQ(d.cols, 7u);
  EXPECT_EQ(std::vector<uint32_t>(d.row_indices(0).begin(), d.row_indices(0).end()),
            (std::vector<uint32_t>{0, 2, 6}));
  EXPECT_EQ(d.row_values(0)[1], -2);
  EXPECT_TRUE(d.row_indices(2).empty());
  EXPECT_EQ(d.row_indices(3).size(), 1u);  // the explicit zero is dropped
}

TEST_F(DataFiles, LibsvmErrorsNameFileAndLine) {
  auto bad = [&](const std::string& text) { return ErrorOf([&] { ReadLibsvm(Write("b.svm", text)); }); };
  EXPECT_THAT(bad("1 1:1\n1 3:1 2:1\n"), HasSubstr("b.svm:2: feature index 2 after 3"));
  EXPECT_THAT(bad("1 1:1\n1 3:1 3:1\n"), HasSubstr("b.svm:2: feature index 3 after 3"));
  EXPECT_THAT(bad("1 0:1\n"), HasSubstr("b.svm:1: feature index 0 is not in [1, 2147483647]"));
  EXPECT_THAT(bad("1 4294967297:1\n"), HasSubstr("b.svm:1: feature index"));
  EXPECT_THAT(bad("1 2:x\n"), HasSubstr("b.svm:1: value of feature 2 'x' is not a finite number"));
  EXPECT_THAT(bad("1 2:nan\n"), HasSubstr("not a finite number"));
  EXPECT_THAT(bad("1 1:1\nspam 1:1\n"), HasSubstr("b.svm:2: label 'spam'"));
  EXPECT_THAT(bad("1 1:1 4\n"), HasSubstr("b.svm:1: '4' is not index:value"));
  EXPECT_THAT(bad("# nothing\n\n"), HasSubstr("no samples"));
}

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

// What WriteLibsvm writes reads back as the same doubles (fmt's shortest round-trip form).
TEST_F(DataFiles, LibsvmWriteReadsBackExactly) {
  Design g = GenerateDesign({.rows = 50, .cols = 30, .block_size = 3, .blocks_per_row = 4, .seed = 2});
  const std::string path = (dir_ / "g.svm").string();
  WriteLibsvm(path, g.data);
  Dataset back = ReadLibsvm(path);
  EXPECT_EQ(back.labels, g.data.labels);
  EXPECT_EQ(back.indices, g.data.indices);
  EXPECT_EQ(back.values, g.data.values);
  EXPECT_EQ(back.row_offsets, g.data.row_offsets);
}

TEST_F(DataFiles, ReadsCsvWithALabelColumn) {
  Dataset d = ReadCsvDesign(Write("c.csv", "a,y,b\n1,10,0\r\n0,20,3.5\n"));
  ASSERT_EQ(d.rows(), 2u);
  EXPECT_EQ(d.cols, 2u);
  EXPECT_EQ(d.labels, (std::vector<double>{10, 20}));
  EXPECT_EQ(std::vector<uint32_t>(d.row_indices(1).begin(), d.row_indices(1).end()),
            (std::vector<uint32_t>{1}));
  EXPECT_EQ(d.row_values(1)[0], 3.5);
  auto bad = [&](const std::string& text) { return ErrorOf([&] { ReadCsvDesign(Write("d.csv", text)); }); };
  EXPECT_THAT(bad("a,b\n1,2\n"), HasSubstr("d.csv:1: no column named 'y'"));
  EXPECT_THAT(bad("a,y\n1,2\n1,2,3\n"), HasSubstr("d.csv:3: 3 fields, where the header has 2"));
  EXPECT_THAT(bad("a,y\n1,2\n1e999,2\n"), HasSubstr("d.csv:3: column 1 '1e999' is not a finite number"));
  EXPECT_THAT(bad("a,y\n1,x\n"), HasSubstr("d.csv:2: label 'x'"));
  EXPECT_THAT(bad("a,y\n"), HasSubstr("no samples"));
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

// Features of one block share a factor: their correlation is the one asked for; across blocks 0.
TEST(DesignGenerator, BlocksHaveTheAskedCorrelationAndTheTruthIsSparse) {
  Design g = GenerateDesign({.rows = 4000,
                             .cols = 40,
                             .block_size = 4,
                             .correlation = 0.8,
                             .blocks_per_row = 10,
                             .true_nonzeros = 5,
                             .noise = 0.1,
                             .seed = 3});
  ASSERT_EQ(g.data.rows(), 4000u);
  EXPECT_EQ(g.data.nonzeros(), 4000u * 40u);
  EXPECT_EQ(std::count_if(g.truth.begin(), g.truth.end(), [](double w) { return w != 0; }), 5);
  auto column = [&](uint32_t j) {
    std::vector<double> c;
    for (size_t r = 0; r < g.data.rows(); ++r) c.push_back(g.data.row_values(r)[j]);
    return c;
  };
  auto corr = [](const std::vector<double>& a, const std::vector<double>& b) {
    double sa = 0, sb = 0, sab = 0, saa = 0, sbb = 0;
    const double n = static_cast<double>(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      sa += a[i], sb += b[i], sab += a[i] * b[i], saa += a[i] * a[i], sbb += b[i] * b[i];
    return (sab - sa * sb / n) / std::sqrt((saa - sa * sa / n) * (sbb - sb * sb / n));
  };
  EXPECT_NEAR(corr(column(0), column(3)), 0.8, 0.03);
  EXPECT_NEAR(corr(column(8), column(9)), 0.8, 0.03);
  EXPECT_NEAR(corr(column(0), column(4)), 0.0, 0.05);
  // The labels follow the truth: y - x.w is the noise.
  double sq = 0;
  for (size_t r = 0; r < g.data.rows(); ++r) {
    double dot = 0;
    for (size_t k = 0; k < g.data.row_indices(r).size(); ++k)
      dot += g.data.row_values(r)[k] * g.truth[g.data.row_indices(r)[k]];
    sq += (g.data.labels[r] - dot) * (g.data.labels[r] - dot);
  }
  EXPECT_NEAR(std::sqrt(sq / 4000), 0.1, 0.01);
  EXPECT_THROW(GenerateDesign({.rows = 10, .cols = 10, .block_size = 3}), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::data
