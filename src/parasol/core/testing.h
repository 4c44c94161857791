// For tests of readers and commands: input files written where the test process keeps its own.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace parasol {

// Writes `text` (bytes as given) to `name` in this test process's folder under gtest's TempDir(),
// parasol-PID, made on first use, and returns its path: processes that run at once never meet.
inline std::string WriteTestFile(const std::string& name, const std::string& text) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("parasol-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace parasol
