// An enum's names both ways from one table, so that what a command accepts and what it prints
// cannot drift apart: the first entry for a value is its name (what NameOf returns and an error
// lists), later entries for it are other spellings also accepted. Every unknown name gets the same
// message: "unknown WHAT 'NAME' (expected a, b or c)".
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace parasol {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

// Throws InvalidArgumentError "unknown WHAT 'NAME' (expected a, b or c)".
[[noreturn]] void ThrowUnknownName(std::string_view what, std::string_view name,
                                   const std::vector<std::string_view>& expected);

// The name of `value` in `names`: its first entry, "?" where the table has none.
template <typename E, size_t N>
constexpr std::string_view NameOf(const EnumName<E> (&names)[N], E value) {
  for (const EnumName<E>& n : names) {
    if (n.value == value) return n.name;
  }
  return "?";
}

// The value `name` spells in `names`; an InvalidArgumentError naming `what` otherwise.
template <typename E, size_t N>
E ParseName(const EnumName<E> (&names)[N], std::string_view name, std::string_view what) {
  for (const EnumName<E>& n : names) {
    if (n.name == name) return n.value;
  }
  std::vector<std::string_view> expected;
  for (const EnumName<E>& n : names) {
    if (NameOf(names, n.value) == n.name) expected.push_back(n.name);  // each value once, by its name
  }
  ThrowUnknownName(what, name, expected);
}

}  // namespace parasol
