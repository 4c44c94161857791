#include "parasol/dl/dynamic/dynamic_data.h"

#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol::dl::dynamic {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(WordVectors, WrongDimensionsNameFileAndLine) {
  const std::string path = WriteTemp("vectors.txt", "good 1 2 3\nbad 1 2\n");
  EXPECT_THAT(
      [&] {
        ReadWordVectors(path, {"good", "bad"}, 3);
      },
      ::testing::ThrowsMessage<ParseError>(HasSubstr("vectors.txt:2: 2 values where --embedding is 3")));
  const std::string ok = WriteTemp("vectors2.txt", "good 1 2 3\nother 4 5 6\n");
  const auto [rows, found] = ReadWordVectors(ok, {"<unk>", "good"}, 3);
  EXPECT_EQ(found, 1);
  EXPECT_EQ(rows, (std::vector<float>{0, 0, 0, 1, 2, 3}));
}

}  // namespace
}  // namespace parasol::dl::dynamic
