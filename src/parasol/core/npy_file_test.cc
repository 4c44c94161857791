#include "parasol/core/npy_file.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string Temp(const std::string& name) { return TestPath(name + ".npy"); }

TEST(NpyFile, TheHeaderIsNumPysVersionOneLayoutPaddedTo64Bytes) {
  const std::vector<uint64_t> shape{2, 3};
  const std::string h = NpyHeader("<f4", shape);
  ASSERT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t len = static_cast<unsigned char>(h[8]) | (static_cast<unsigned char>(h[9]) << 8);
  EXPECT_EQ(len, h.size() - 10);
  EXPECT_EQ(h.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(h.back(), '\n');
  EXPECT_EQ(h.find_first_not_of(' ', 10 + 59), h.size() - 1) << "spaces, then the newline";
  const std::vector<uint64_t> one{5};
  EXPECT_NE(NpyHeader("<i8", one).find("'shape': (5,), }"), std::string::npos);
}

TEST(NpyFile, TheValuesFollowTheHeaderInCOrder) {
  const std::string path = Temp("npy-values");
  const std::vector<uint64_t> shape{2, 2};
  WriteNpy<float>(path, shape, [](const auto& rows) {
    const float first[2] = {1.5f, -2.0f}, second[2] = {0.25f, 8.0f};
    rows(std::span<const float>(first));
    rows(std::span<const float>(second));
  });
  const std::string bytes = ReadAll(path);
  const std::string header = NpyHeader("<f4", shape);
  ASSERT_EQ(bytes.size(), header.size() + 16);
  EXPECT_EQ(bytes.substr(0, header.size()), header);
  float values[4];
  std::memcpy(values, bytes.data() + header.size(), 16);
  EXPECT_EQ(values[0], 1.5f);
  EXPECT_EQ(values[1], -2.0f);
  EXPECT_EQ(values[2], 0.25f);
  EXPECT_EQ(values[3], 8.0f);
  std::filesystem::remove(path);
}

TEST(NpyFile, ValuesThatDoNotFillTheShapeLeaveNoFile) {
  const std::string path = Temp("npy-short");
  const std::vector<uint64_t> shape{3};
  const int64_t two[2] = {1, 2};
  EXPECT_THROW(WriteNpy<int64_t>(path, shape, [&](const auto& rows) { rows(std::span<const int64_t>(two)); }),
               InvalidArgumentError);
  EXPECT_THROW(WriteNpy<int64_t>(path, shape,
                                 [&](const auto& rows) {
                                   rows(std::span<const int64_t>(two));
                                   rows(std::span<const int64_t>(two));
                                 }),
               InvalidArgumentError);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace parasol
