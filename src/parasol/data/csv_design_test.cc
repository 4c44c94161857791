#include "parasol/data/csv_design.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/data/testing.h"

namespace parasol::data {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace parasol::data
