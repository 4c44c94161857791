#include "parasol/dl/dynamic/sst_treebank.h"

#include <fstream>
#include <string>
#include <unordered_map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/testing.h"

namespace parasol::dl::dynamic {
namespace {

using ::testing::HasSubstr;

TEST(Treebank, MalformedTreesNameFileAndLine) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  const auto fails = [&](const std::string& text, const std::string& what) {
    const std::string path = WriteTestFile("bad_tree.txt", text);
    EXPECT_THAT([&] { ReadTreebank(path, vocab, true); },
                ::testing::ThrowsMessage<ParseError>(HasSubstr(what)))
        << text;
  };
  fails("(2 (2 a) (2 b))\n(2 (2 a) (2 b)\n", "bad_tree.txt:2: unbalanced brackets");
  fails("(7 (2 a) (2 b))\n", "bad_tree.txt:1: a node's label must be 0-4");
  fails("(2 (2 a) (2 b) (2 c))\n", "bad_tree.txt:1: a node has more than two children");
  fails("(2 (2 a) (2 b)))\n", "bad_tree.txt:1: text after the tree");
  fails("(2 a (2 b))\n", "bad_tree.txt:1: a node has both a word and children");
  fails("(2 ())\n", "bad_tree.txt:1: a node's label must be 0-4");
  fails("", "bad_tree.txt: no tree");
}

}  // namespace
}  // namespace parasol::dl::dynamic
