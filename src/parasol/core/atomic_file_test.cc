#include "parasol/core/atomic_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "parasol/core/error.h"
#include "parasol/core/faulty_file_system.h"
#include "parasol/core/test_dir.h"

namespace parasol {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (dir_ / "state").string();
    WriteFileAtomically(path_, [](std::ostream& out) { out << "previous"; });
  }

  std::string Contents() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  TestDir dir_{"atomic"};
  std::string path_;
};

TEST_F(AtomicFileTest, ReplacesTheFileWhole) {
  WriteFileAtomically(path_, [](std::ostream& out) { out << "next"; });
  EXPECT_EQ(Contents(), "next");
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

// A writer that fails half-way (here by throwing) leaves the previous file and no temporary.
TEST_F(AtomicFileTest, AFailedWriteLeavesThePreviousFile) {
  EXPECT_THROW(WriteFileAtomically(path_,
                                   [](std::ostream& out) {
                                     out << "half of the";
                                     throw IoError("the source went away");
                                   }),
               IoError);
  EXPECT_EQ(Contents(), "previous");
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

// A full disk, made by a file-size limit of 4 KiB on this process (the write then fails with
// EFBIG as it would with ENOSPC): an error naming the file, and the previous file intact.
TEST_F(AtomicFileTest, AFullDiskIsAnErrorNamingTheFile) {
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);  // the write's error, not the signal, reports it
  rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    WriteFileAtomically(path_, [](std::ostream& out) { out << std::string(1 << 20, 'x'); });
  } catch (const IoError& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  EXPECT_THAT(message, HasSubstr(path_ + ".tmp: write failed"));
  EXPECT_EQ(Contents(), "previous");
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

TEST_F(AtomicFileTest, AFolderThatCannotBeWrittenIsAnError) {
  try {
    WriteFileAtomically((dir_ / "no-such-folder" / "file").string(), [](std::ostream& out) { out << "x"; });
    FAIL() << "wrote into a missing folder";
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no-such-folder/file.tmp: cannot create file"));
  }
}

// The same three faults through the injectable file layer, on a stream big enough to be written
// in several appends: the error names the temporary file, the previous file is whole.
TEST_F(AtomicFileTest, InjectedWriteErrorAndFullDiskLeaveThePreviousFile) {
  const std::string big(300000, 'x');
  for (FileFault fault : {FileFault::kWriteError, FileFault::kDiskFull}) {
    FaultyFileSystem fs;
    fs.Arm(fault, "state", 100000);
    std::string message;
    try {
      WriteFileAtomically(fs, path_, [&](std::ostream& out) { out << big; });
    } catch (const IoError& e) {
      message = e.what();
    }
    EXPECT_EQ(fs.fired(), 1);
    EXPECT_THAT(message, HasSubstr(path_ + ".tmp: write failed: "));
    EXPECT_THAT(message, HasSubstr(fault == FileFault::kDiskFull ? "No space left" : "Input/output error"));
    EXPECT_EQ(Contents(), "previous");
    EXPECT_FALSE(fs::exists(path_ + ".tmp"));
  }
}

// A process that dies half-way through leaves its torn temporary (no clean-up runs), and the file
// itself as it was.
TEST_F(AtomicFileTest, ACrashHalfWayLeavesATornTemporaryAndThePreviousFile) {
  FaultyFileSystem fs;
  fs.Arm(FileFault::kCrash, "state", 70000);
  EXPECT_THROW(WriteFileAtomically(fs, path_, [&](std::ostream& out) { out << std::string(300000, 'y'); }),
               IoError);
  EXPECT_TRUE(fs.crashed());
  EXPECT_EQ(Contents(), "previous");
  EXPECT_EQ(fs::file_size(path_ + ".tmp"), 70000u);
}

TEST_F(AtomicFileTest, OnlyTheArmedFileFails) {
  FaultyFileSystem fs;
  fs.Arm(FileFault::kWriteError, "other-name");
  WriteFileAtomically(fs, path_, [](std::ostream& out) { out << "next"; });
  EXPECT_EQ(Contents(), "next");
  EXPECT_EQ(fs.fired(), 0);
}

}  // namespace
}  // namespace parasol
