// For tests of readers and commands: input files written where the test process keeps its own.
#pragma once

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "parasol/core/test_dir.h"

namespace parasol {

// Writes `text` (bytes as given) to `name` in this test process's folder under gtest's TempDir(),
// parasol-PID, made on first use, and returns its path: processes that run at once never meet.
inline std::string WriteTestFile(const std::string& name, const std::string& text) {
  const std::string path = TestPath(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace parasol
