// For tests that write files: a fresh folder per test, so that fixtures do not each make, name and
// remove their own (and two test processes running at once never share one).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace parasol {

// This test process's folder under gtest's TempDir() (parasol-PID; WriteTestFile's in core/testing.h
// too), made on first use.
inline std::filesystem::path TestProcessDir() {
  const auto dir = std::filesystem::path(::testing::TempDir()) / ("parasol-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Where a test may write the file `name` (nothing is made there).
inline std::string TestPath(const std::string& name) { return (TestProcessDir() / name).string(); }

// The empty folder `name` in this test process's folder, removed with everything in it when the
// object goes. What an earlier test of the same name left there is removed first.
class TestDir {
 public:
  explicit TestDir(const std::string& name) : path_(TestProcessDir() / name) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TestDir() {
    std::error_code ignored;  // a test that failed half-way may have removed it already
    std::filesystem::remove_all(path_, ignored);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  operator const std::filesystem::path&() const { return path_; }  // NOLINT: used as the path it is
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace parasol
