// The project's one number parser and field splitters: every reader of a user's file goes
// through them, so that "64x", "inf", "nan" and out-of-range values are errors that name the
// file and line (see line_reader.h for reading the lines themselves).
#pragma once

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
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

// The words of `text` between blanks (spaces, tabs, '\r').
inline std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  size_t pos = 0;
  for (std::string_view w = NextField(text, pos); !w.empty(); w = NextField(text, pos)) words.emplace_back(w);
  return words;
}

// The fields of `line` between `sep` characters (a trailing '\r' dropped): "a,,b" gives 3.
inline std::vector<std::string_view> SplitFields(std::string_view line, char sep) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string_view> fields;
  for (size_t start = 0;;) {
    const size_t end = line.find(sep, start);
    fields.push_back(
        line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

// Parses the whole of `text` as a T: digits only for integers (in T's range; `base` 16 for hex),
// a finite decimal for floating point (no "inf", "nan", hex or trailing characters). Returns
// false otherwise.
template <typename T>
bool ParseNumber(std::string_view text, T* value, int base = 10) {
  static_assert(std::is_arithmetic_v<T>);
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  std::from_chars_result r;
  if constexpr (std::is_floating_point_v<T>) {
    // from_chars takes "inf", "nan" and "infinity": a number from a file must be finite.
    r = std::from_chars(text.data(), end, *value, std::chars_format::general);
    if (r.ec == std::errc() && !std::isfinite(*value)) return false;
  } else {
    r = std::from_chars(text.data(), end, *value, base);
  }
  return r.ec == std::errc() && r.ptr == end;
}

// Parses a whole field as a number; ParseError "path:lineno: <what> 'x' is not a number" otherwise.
template <typename T>
T ParseField(std::string_view field, const std::string& path, long lineno, std::string_view what) {
  T value{};
  if (field.empty()) throw ParseError(path, lineno, fmt::format("missing {}", what));
  if (!ParseNumber(field, &value)) {
    if constexpr (std::is_floating_point_v<T>) {
      throw ParseError(path, lineno, fmt::format("{} '{}' is not a finite number", what, field));
    } else {
      throw ParseError(path, lineno, fmt::format("{} '{}' is not a whole number", what, field));
    }
  }
  return value;
}

// ParseField, and `lo <= value <= hi`: "path:lineno: <what> 5 is not in [1, 4]" otherwise.
template <typename T>
T ParseFieldIn(std::string_view field, const std::string& path, long lineno, std::string_view what, T lo,
               T hi) {
  const T value = ParseField<T>(field, path, lineno, what);
  if (!(value >= lo && value <= hi)) {
    throw ParseError(path, lineno, fmt::format("{} {} is not in [{}, {}]", what, field, lo, hi));
  }
  return value;
}

}  // namespace parasol
