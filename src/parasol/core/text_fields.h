// Whitespace-separated fields of a text line, parsed with the file and line for errors.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

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

// The fields of `line` between `sep` characters (a trailing '\r' dropped): "a,,b" gives 3.
inline std::vector<std::string_view> SplitFields(std::string_view line, char sep) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t end = line.find(sep, start);
    fields.push_back(line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
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
