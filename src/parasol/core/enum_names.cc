#include "parasol/core/enum_names.h"

#include <string>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol {

void ThrowUnknownName(std::string_view what, std::string_view name,
                      const std::vector<std::string_view>& expected) {
  std::string list;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (i > 0) list += i + 1 == expected.size() ? " or " : ", ";
    list += expected[i];
  }
  throw InvalidArgumentError(fmt::format("unknown {} '{}' (expected {})", what, name, list));
}

}  // namespace parasol
