// Section files as their readers meet them: what was written reads back exactly; a file of
// another kind, one cut at any byte, one with any byte changed, a crafted count, a wrong element
// size or count, a missing section are each a ParseError naming the file, and nothing is sized by
// an unchecked number; a failed write (a full disk, a crash half-way) leaves the previous file.
#include "parasol/core/section_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "parasol/core/error.h"
#include "parasol/core/faulty_file_system.h"
#include "parasol/core/test_dir.h"

namespace parasol {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class SectionFileTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = (dir_ / "state.bin").string(); }

  std::string Bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void Put(const std::string& bytes) const { std::ofstream(path_, std::ios::binary) << bytes; }
  // The ParseError's message, "" when the file reads.
  std::string ReadError() const {
    try {
      SectionReader r(path_, "test-kind");
      r.Get<double>("weights", 5);
      r.Get<uint32_t>("ids");
      return "";
    } catch (const ParseError& e) {
      return e.what();
    }
  }
  void WriteSample(FileSystem& files, double first = 1.5) const {
    const std::vector<double> weights = {first, -2.0, 3.25, 0.0, 1e-300};
    const std::vector<uint32_t> ids = {7, 11, 13};  // 12 bytes: the section is padded
    SectionWriter w("test-kind");
    w.Add("weights", weights);
    w.Add("ids", ids);
    w.AddValue("step", int64_t{42});
    w.Write(files, path_);
  }

  TestDir dir_{"section"};
  std::string path_;
};

TEST_F(SectionFileTest, WhatWasWrittenReadsBackExactly) {
  LocalFileSystem local;
  WriteSample(local);
  SectionReader r(path_, "test-kind");
  EXPECT_EQ(r.Get<double>("weights", 5), (std::vector<double>{1.5, -2.0, 3.25, 0.0, 1e-300}));
  EXPECT_EQ(r.Get<uint32_t>("ids"), (std::vector<uint32_t>{7, 11, 13}));
  EXPECT_EQ(r.GetValue<int64_t>("step"), 42);
  EXPECT_TRUE(r.Has("ids"));
  EXPECT_FALSE(r.Has("bias"));
  EXPECT_EQ(Bytes().size() % 8, 0u);
}

TEST_F(SectionFileTest, WrongKindCountSizeOrNameIsAParseErrorNamingTheFile) {
  LocalFileSystem local;
  WriteSample(local);
  auto error = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error([&] { SectionReader(path_, "other-kind"); }),
            path_ + ": a file of kind 'test-kind', not 'other-kind'");
  SectionReader r(path_, "test-kind");
  EXPECT_THAT(error([&] { r.Get<double>("weights", 6); }), HasSubstr("section 'weights' holds 5 values; 6"));
  EXPECT_THAT(error([&] { r.Get<float>("weights", 5); }), HasSubstr("8-byte values, not 4-byte ones"));
  EXPECT_EQ(error([&] { r.Get<double>("bias", 1); }), path_ + ": no section 'bias'");
}

TEST_F(SectionFileTest, EveryCutAndEveryChangedByteIsFound) {
  LocalFileSystem local;
  WriteSample(local);
  const std::string whole = Bytes();
  for (size_t n = 0; n < whole.size(); ++n) {
    Put(whole.substr(0, n));
    EXPECT_THAT(ReadError(), HasSubstr(path_ + ": ")) << "cut at " << n;
  }
  for (size_t i = 0; i < whole.size(); ++i) {
    std::string changed = whole;
    changed[i] = static_cast<char>(changed[i] ^ 0x20);
    Put(changed);
    EXPECT_THAT(ReadError(), HasSubstr(path_ + ": ")) << "byte " << i << " changed";
  }
  Put(whole + std::string(8, '\0'));
  EXPECT_THAT(ReadError(), HasSubstr("trailing bytes"));
}

// A crafted count of 2^61 elements of 8 bytes: refused against the file's size, not allocated.
TEST_F(SectionFileTest, ACraftedCountIsRefusedNotAllocated) {
  LocalFileSystem local;
  WriteSample(local);
  std::string bytes = Bytes();
  const uint64_t huge = uint64_t{1} << 61;
  std::memcpy(bytes.data() + 32 + 16 + 8, &huge, sizeof huge);  // the first section's count
  Put(bytes);
  EXPECT_THAT(ReadError(), HasSubstr("corrupt section header"));
}

TEST_F(SectionFileTest, AFailedWriteLeavesThePreviousFileWhole) {
  LocalFileSystem local;
  WriteSample(local, 1.5);
  for (FileFault fault : {FileFault::kWriteError, FileFault::kDiskFull, FileFault::kCrash}) {
    FaultyFileSystem faulty;
    faulty.Arm(fault, "state.bin", /*after_bytes=*/40);
    try {
      WriteSample(faulty, 9.0);
      FAIL() << "the write succeeded";
    } catch (const IoError& e) {
      EXPECT_THAT(e.what(), HasSubstr("state.bin"));
    }
    EXPECT_EQ(SectionReader(path_, "test-kind").Get<double>("weights", 5)[0], 1.5) << "the previous file";
  }
}

}  // namespace
}  // namespace parasol
