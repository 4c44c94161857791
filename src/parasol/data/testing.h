// For the data readers' tests: files written into a fresh folder, and the message of the
// ParseError a reader throws.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol::data {

class DataFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("parasol_data_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
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
  std::filesystem::path dir_;
};

}  // namespace parasol::data
