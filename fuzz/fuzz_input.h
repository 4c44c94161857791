// What every fuzz target shares: parasol's readers take paths, so each input is written to a
// file in a folder of the fuzzing process's own (on /dev/shm when there is one), and an input
// for a reader of several files is split into parts at NUL bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parasol/core/error.h"

namespace parasol::fuzz {

// The process's folder (created on first use, removed at exit).
const std::string& Dir();

// Writes `bytes` to Dir()/name (replacing it) and returns the path.
std::string WriteFile(const std::string& name, std::string_view bytes);

// The input cut at its first `parts - 1` NUL bytes; missing parts are empty.
std::vector<std::string_view> Split(const uint8_t* data, size_t size, size_t parts);

// Runs the reader. A ParseError is its correct answer to bad input; any other exception escapes
// and libFuzzer reports it (as it does a crash, a hang or an allocation past -rss_limit_mb).
template <typename Fn>
int Read(Fn&& read) {
  try {
    read();
  } catch (const ParseError&) {
  }
  return 0;
}

}  // namespace parasol::fuzz
