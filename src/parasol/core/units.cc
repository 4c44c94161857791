#include "parasol/core/units.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol {

uint64_t ParseBytes(std::string_view text, std::string_view what) {
  auto bad = [&] {
    return InvalidArgumentError(
        fmt::format("{}: '{}' is not a size (examples: 8, 4K, 64KiB, 256M, 1G)", what, text));
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) throw bad();
  double value = 0;
  if (!ParseNumber(text.substr(0, i), &value)) throw bad();
  std::string suffix;
  for (char c : text.substr(i)) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double mult = 1;
  if (suffix.empty() || suffix == "B")
    mult = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
    mult = 1024.0;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
    mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
    mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else
    throw bad();
  double bytes = value * mult;
  if (bytes != std::floor(bytes) || bytes > 9.0e18) throw bad();
  return static_cast<uint64_t>(bytes);
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{}{}", bytes, kUnits[u]);
}

std::vector<std::string> SplitList(std::string_view text, std::string_view what) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    if (item.empty()) throw InvalidArgumentError(fmt::format("{}: empty item in '{}'", what, text));
    out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

int64_t ParseInt(std::string_view text, std::string_view what) {
  int64_t v = 0;
  if (!ParseNumber(text, &v)) {
    throw InvalidArgumentError(fmt::format("{}: '{}' is not an integer", what, text));
  }
  return v;
}

std::vector<int64_t> ParseIntList(std::string_view text, std::string_view what) {
  std::vector<int64_t> out;
  for (const auto& item : SplitList(text, what)) out.push_back(ParseInt(item, what));
  return out;
}

}  // namespace parasol
