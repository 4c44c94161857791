#include "parasol/dl/text_tokens.h"

#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/testing.h"

namespace parasol::dl {
namespace {

using ::testing::HasSubstr;

TEST(TextTokens, CharactersAndWordsWithTheirVocabulary) {
  const std::string path = WriteTestFile("lm_text.txt", "ab a\nba b\nab c\n");
  const TextTokens c = ReadTextTokens(path, TextLevel::kChar, 0.3, 2);
  EXPECT_EQ(c.vocab, (std::vector<std::string>{"\n", " ", "a", "b"}));
  EXPECT_EQ(c.train.size(), 10u);                               // "ab a\n" "ba b\n"
  EXPECT_EQ(c.validation, (std::vector<int64_t>{2, 3, 1, 0}));  // 'c' unseen: left out
  const TextTokens w = ReadTextTokens(path, TextLevel::kWord, 0.3, 2);
  EXPECT_EQ(w.vocab, (std::vector<std::string>{"<eol>", "<unk>", "a", "ab", "b", "ba"}));
  EXPECT_EQ(w.validation, (std::vector<int64_t>{3, 1, 0}));  // "ab c <eol>"
}

TEST(TextTokens, TooShortOrEmptyTextIsAnErrorNamingTheFile) {
  const std::string empty = WriteTestFile("lm_empty.txt", "");
  EXPECT_THAT([&] { ReadTextTokens(empty, TextLevel::kChar, 0.1, 8); },
              ::testing::ThrowsMessage<ParseError>(HasSubstr("lm_empty.txt: no text")));
  const std::string small = WriteTestFile("lm_small.txt", "abc\nd\n");
  EXPECT_THAT([&] { ReadTextTokens(small, TextLevel::kChar, 0.5, 8); },
              ::testing::ThrowsMessage<ParseError>(HasSubstr("each needs at least 9 (--seq 8 + 1)")));
  EXPECT_THROW(ParseTextLevel("bytes"), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::dl
