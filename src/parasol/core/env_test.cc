#include "parasol/core/env.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "parasol/core/faulty_file_system.h"
#include "parasol/core/test_dir.h"

namespace parasol {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Env, DefaultsToTheMachinesFilesAndClock) {
  Env env;
  const fs::path path = TestPath("env_default");
  {
    auto f = env.files().NewWritableFile(path.string());
    f->Append("written");
    f->Close();
  }
  EXPECT_EQ(Read(path), "written");
  fs::remove(path);
  EXPECT_FALSE(env.clock().driven());
}

// A copy names the same file system and clock: what a test hands a Context reaches every writer
// and timer made from it.
TEST(Env, ACopyReachesTheSameFilesAndClock) {
  FaultyFileSystem faulty;
  ManualClock clock;
  Env env(&faulty, &clock);
  Env copy = env;
  EXPECT_EQ(&copy.files(), &faulty);
  EXPECT_EQ(&copy.clock(), &clock);
  clock.Advance(5s);
  EXPECT_EQ(copy.clock().Now(), env.clock().Now());
}

}  // namespace
}  // namespace parasol
