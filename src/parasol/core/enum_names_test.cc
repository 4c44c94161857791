// One table gives an enum's names both ways: the first spelling of a value is its name, the others
// are accepted, and an unknown name is an error listing each value once, by its name.
#include "parasol/core/enum_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol {
namespace {

enum class Fruit { kApple, kPear, kQuince, kUnlisted };

constexpr EnumName<Fruit> kFruits[] = {
    {Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}, {Fruit::kPear, "perry"}, {Fruit::kQuince, "quince"}};

TEST(EnumNames, TheFirstSpellingIsTheNameAndEverySpellingParses) {
  EXPECT_EQ(NameOf(kFruits, Fruit::kApple), "apple");
  EXPECT_EQ(NameOf(kFruits, Fruit::kPear), "pear");
  EXPECT_EQ(NameOf(kFruits, Fruit::kUnlisted), "?");
  EXPECT_EQ(ParseName(kFruits, "pear", "fruit"), Fruit::kPear);
  EXPECT_EQ(ParseName(kFruits, "perry", "fruit"), Fruit::kPear);
  EXPECT_EQ(ParseName(kFruits, "quince", "fruit"), Fruit::kQuince);
}

TEST(EnumNames, AnUnknownNameListsEachValueOnceByItsName) {
  try {
    ParseName(kFruits, "Pear", "fruit");
    FAIL() << "a name of the wrong case was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_STREQ(e.what(), "unknown fruit 'Pear' (expected apple, pear or quince)");
  }
  constexpr EnumName<Fruit> kOne[] = {{Fruit::kApple, "apple"}};
  EXPECT_THAT(
      [&] { ParseName(kOne, "", "fruit"); },
      ::testing::ThrowsMessage<InvalidArgumentError>(::testing::StrEq("unknown fruit '' (expected apple)")));
}

}  // namespace
}  // namespace parasol
