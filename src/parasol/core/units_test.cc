#include "parasol/core/units.h"

#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/stats.h"

namespace parasol {
namespace {

TEST(Units, ParseBytes) {
  EXPECT_EQ(ParseBytes("8"), 8u);
  EXPECT_EQ(ParseBytes("4K"), 4096u);
  EXPECT_EQ(ParseBytes("64KiB"), 65536u);
  EXPECT_EQ(ParseBytes("256M"), 256u << 20);
  EXPECT_EQ(ParseBytes("1g"), 1u << 30);
  EXPECT_EQ(ParseBytes("1.5M"), 3u << 19);
  EXPECT_THROW(ParseBytes("4X"), InvalidArgumentError);
  EXPECT_THROW(ParseBytes(""), InvalidArgumentError);
  EXPECT_THROW(ParseBytes("K"), InvalidArgumentError);
  EXPECT_THROW(ParseBytes("0.3"), InvalidArgumentError);
}

TEST(Units, ErrorNamesTheOption) {
  try {
    ParseBytes("12Q", "--sizes");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("--sizes: '12Q'"), std::string::npos) << e.what();
  }
}

TEST(Units, FormatBytesRoundTrips) {
  for (uint64_t b : {uint64_t{8}, uint64_t{1000}, uint64_t{4096}, uint64_t{256} << 20, uint64_t{3} << 30}) {
    EXPECT_EQ(ParseBytes(FormatBytes(b)), b);
  }
  EXPECT_EQ(FormatBytes(65536), "64K");
}

TEST(Units, Lists) {
  EXPECT_EQ(ParseIntList("3, 17,-2"), (std::vector<int64_t>{3, 17, -2}));
  EXPECT_THROW(ParseIntList("3,,4"), InvalidArgumentError);
  EXPECT_THROW(ParseIntList("3,x"), InvalidArgumentError);
  EXPECT_EQ(SplitList("ring,mpi"), (std::vector<std::string>{"ring", "mpi"}));
}

TEST(Stats, Median) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({5, 1, 3}), 3);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace parasol
