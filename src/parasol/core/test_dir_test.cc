#include "parasol/core/test_dir.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace parasol {
namespace {

namespace fs = std::filesystem;

TEST(TestDir, IsFreshEmptyAndGoesWithTheObject) {
  fs::path where;
  {
    const TestDir dir("fresh");
    where = dir.path();
    EXPECT_TRUE(fs::is_directory(where));
    EXPECT_TRUE(fs::is_empty(dir));
    EXPECT_NE(where.string().find("parasol-" + std::to_string(::getpid())), std::string::npos);
    std::ofstream(dir / "a") << "written";
    EXPECT_EQ(dir / "a", where / "a");
  }
  EXPECT_FALSE(fs::exists(where));
  // What a test that crashed left behind is not seen by the next one of the same name.
  fs::create_directories(where / "sub");
  std::ofstream(where / "sub" / "old") << "left";
  const TestDir again("fresh");
  EXPECT_EQ(again.path(), where);
  EXPECT_TRUE(fs::is_empty(again));
}

TEST(TestDir, NamesAreApart) {
  const TestDir a("one"), b("two");
  EXPECT_NE(a.path(), b.path());
  EXPECT_EQ(a.path().parent_path(), b.path().parent_path());
}

}  // namespace
}  // namespace parasol
