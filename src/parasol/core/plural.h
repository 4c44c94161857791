// "1 rank", "2 ranks", "1 process", "3 processes": counts in what users read, singular or plural.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace parasol {

// `plural` defaults to `singular` + "s" ("es" after s, x, ch or sh).
inline std::string Count(uint64_t n, std::string_view singular, std::string_view plural = {}) {
  if (n == 1) return fmt::format("1 {}", singular);
  if (!plural.empty()) return fmt::format("{} {}", n, plural);
  const bool es = singular.ends_with('s') || singular.ends_with('x') || singular.ends_with("ch") ||
                  singular.ends_with("sh");
  return fmt::format("{} {}{}", n, singular, es ? "es" : "s");
}

}  // namespace parasol
