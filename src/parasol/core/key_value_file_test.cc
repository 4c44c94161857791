#include "parasol/core/key_value_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "parasol/core/error.h"
#include "parasol/core/faulty_file_system.h"
#include "parasol/core/test_dir.h"

namespace parasol {
namespace {

using ::testing::HasSubstr;

class KeyValueFileTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }

  KeyValueFile ReadText(const std::string& text) {
    std::ofstream(path_) << text;
    return KeyValueFile::Read(path_, "demo-meta", 2, {"steps", "rate", "name"});
  }
  // The message of the ParseError that reading `text` throws ("" when it reads).
  std::string Error(const std::string& text) {
    try {
      const KeyValueFile f = ReadText(text);
      (void)f.Number<uint64_t>("steps");
      (void)f.Number<double>("rate");
      (void)f.Text("name");
    } catch (const ParseError& e) {
      return e.what();
    }
    return "";
  }

  const std::string path_ = TestPath("kv.txt");
};

TEST_F(KeyValueFileTest, ReadsKeysInAnyOrder) {
  const KeyValueFile f = ReadText("demo-meta 2\nrate 0.25\nname ap\r\nsteps 12\n");
  EXPECT_EQ(f.Number<uint64_t>("steps"), 12u);
  EXPECT_DOUBLE_EQ(f.Number<double>("rate"), 0.25);
  EXPECT_EQ(f.Text("name"), "ap");
  EXPECT_TRUE(f.Has("rate"));
}

TEST_F(KeyValueFileTest, ErrorsNameTheFileAndTheKeysLine) {
  EXPECT_THAT(Error("demo-meta 1\nsteps 1\n"), HasSubstr(path_ + ":1: not a demo-meta file (version 2)"));
  EXPECT_THAT(Error("other 2\n"), HasSubstr(":1: not a demo-meta file"));
  EXPECT_THAT(Error("demo-meta 2\nsteps 1\nrate x\nname a\n"),
              HasSubstr(path_ + ":3: rate 'x' is not a finite"));
  EXPECT_THAT(Error("demo-meta 2\nsteps -1\nrate 1\nname a\n"), HasSubstr(":2: steps '-1' is not a whole"));
  EXPECT_THAT(Error("demo-meta 2\nsteps 1\nsteps 2\n"), HasSubstr(":3: 'steps' is given twice"));
  EXPECT_THAT(Error("demo-meta 2\nspeed 1\n"), HasSubstr(":2: unknown key 'speed'"));
  EXPECT_THAT(Error("demo-meta 2\nsteps\n"), HasSubstr(":2: expected 'key value'"));
  EXPECT_THAT(Error("demo-meta 2\nsteps 1 2\n"), HasSubstr(":2: expected 'key value'"));
  EXPECT_THAT(Error("demo-meta 2\nsteps 1\nrate 1\n"), HasSubstr(path_ + ": no 'name' line"));
  EXPECT_THAT(Error(""), HasSubstr("empty file"));
}

TEST_F(KeyValueFileTest, RangesAndRejectedValuesPointAtTheLine) {
  const KeyValueFile f = ReadText("demo-meta 2\nsteps 70000\nrate 2\nname a\n");
  try {
    (void)f.NumberIn<uint64_t>("steps", 1, 65536);
    FAIL() << "70000 is out of range";
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), HasSubstr(":2: steps 70000 is not in [1, 65536]"));
  }
  EXPECT_THROW(f.Fail("rate", "rate must be below 1"), ParseError);
}

TEST_F(KeyValueFileTest, RequireNamesTheFirstMissingKey) {
  const KeyValueFile f = ReadText("demo-meta 2\nrate 1\n");
  EXPECT_NO_THROW(f.Require({"rate"}));
  try {
    f.Require({"rate", "steps", "name"});
    FAIL() << "steps is missing";
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path_ + ": no 'steps' line"));
  }
}

TEST_F(KeyValueFileTest, AMissingFileIsAnIoError) {
  EXPECT_THROW(KeyValueFile::Read(path_ + ".none", "demo-meta", 2, {"steps"}), IoError);
}

// What the writer writes, the reader reads: every double exactly, integers of any width.
TEST_F(KeyValueFileTest, WhatTheWriterWritesReadsBackExactly) {
  const double rate = 0.1 + 0.2;  // not a short decimal
  KeyValueWriter("demo-meta", 2)
      .Add("steps", uint64_t{1} << 60)
      .Add("rate", rate)
      .Add("name", "ap")
      .Write(path_);
  const KeyValueFile f = KeyValueFile::Read(path_, "demo-meta", 2, {"steps", "rate", "name"});
  EXPECT_EQ(f.Number<uint64_t>("steps"), uint64_t{1} << 60);
  EXPECT_EQ(f.Number<double>("rate"), rate);
  EXPECT_EQ(f.Text("name"), "ap");
}

// A write that fails (the disk full at the second line) names the file and leaves the previous.
TEST_F(KeyValueFileTest, AFailedWriteLeavesThePreviousFile) {
  KeyValueWriter("demo-meta", 2).Add("steps", 1).Add("rate", 0.5).Add("name", "first").Write(path_);
  FaultyFileSystem faulty;
  faulty.Arm(FileFault::kDiskFull, "kv.txt", /*after_bytes=*/14);
  try {
    KeyValueWriter("demo-meta", 2)
        .Add("steps", 2)
        .Add("rate", 0.5)
        .Add("name", "second")
        .Write(faulty, path_);
    FAIL() << "the write succeeded";
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path_));
  }
  EXPECT_EQ(KeyValueFile::Read(path_, "demo-meta", 2, {"steps", "rate", "name"}).Text("name"), "first");
}

}  // namespace
}  // namespace parasol
