// Whitespace-separated fields of a text line, parsed with the file and line for errors.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol {

// The next field of `line` from `pos` (spaces, tabs and '\r' separate fields); empty at the end.
inline std::string_view NextField(std::string_view line, size_t& pos) {
  while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r')) ++pos;
  size_t start = pos;
  while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t' && line[pos] != '\r') ++pos;
  return line.substr(start, pos - start);
}

// Parses a whole field as a number; ParseError "path:lineno: <what> 'x' is not a number" otherwise.
template <typename T>
T ParseField(std::string_view field, const std::string& path, long lineno, std::string_view what) {
  T value{};
  if (field.empty()) throw ParseError(path, lineno, fmt::format("missing {}", what));
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size()) {
    throw ParseError(path, lineno, fmt::format("{} '{}' is not a number", what, field));
  }
  return value;
}

}  // namespace parasol
