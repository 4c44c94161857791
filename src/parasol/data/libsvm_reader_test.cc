#include "parasol/data/libsvm_reader.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/data/design_generator.h"
#include "parasol/data/testing.h"

namespace parasol::data {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace parasol::data
