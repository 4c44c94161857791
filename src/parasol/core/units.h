// Sizes and lists as users type them on the command line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parasol {

// "8", "4K", "64KiB", "256M", "1G", "1.5M" -> bytes (binary multiples). Throws
// InvalidArgumentError naming `what` (e.g. "--sizes") on anything else.
uint64_t ParseBytes(std::string_view text, std::string_view what = "size");
// 4096 -> "4K", 268435456 -> "256M", 1000 -> "1000".
std::string FormatBytes(uint64_t bytes);
// "a,b,c" -> {"a","b","c"}; empty items are rejected.
std::vector<std::string> SplitList(std::string_view text, std::string_view what = "list");
// "3,17" -> {3, 17}; throws on non-integers.
std::vector<int64_t> ParseIntList(std::string_view text, std::string_view what = "list");
// Strict integer parse of the whole string.
int64_t ParseInt(std::string_view text, std::string_view what = "value");

}  // namespace parasol
