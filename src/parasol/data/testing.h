// For the data readers' tests: files written into a fresh folder, and the message of the
// ParseError a reader throws.
#pragma once

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::data {

class DataFiles : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  template <typename Fn>
  std::string ErrorOf(Fn fn) {
    try {
      fn();
    } catch (const ParseError& e) {
      return e.what();
    }
    return "no error";
  }
  TestDir dir_{"data"};
};

}  // namespace parasol::data
