#include "parasol/dl/dynamic/dynamic_data.h"

#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/testing.h"

namespace parasol::dl::dynamic {
namespace {

using ::testing::HasSubstr;

TEST(WordVectors, WrongDimensionsNameFileAndLine) {
  const std::string path = WriteTestFile("vectors.txt", "good 1 2 3\nbad 1 2\n");
  EXPECT_THAT(
      [&] {
        ReadWordVectors(path, {"good", "bad"}, 3);
      },
      ::testing::ThrowsMessage<ParseError>(HasSubstr("vectors.txt:2: 2 values where --embedding is 3")));
  const std::string ok = WriteTestFile("vectors2.txt", "good 1 2 3\nother 4 5 6\n");
  const auto [rows, found] = ReadWordVectors(ok, {"<unk>", "good"}, 3);
  EXPECT_EQ(found, 1);
  EXPECT_EQ(rows, (std::vector<float>{0, 0, 0, 1, 2, 3}));
}

}  // namespace
}  // namespace parasol::dl::dynamic
