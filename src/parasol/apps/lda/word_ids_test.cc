// The word table of the corpus readers: every word added is found with its own number, through
// the table's growth; a word never added is not, however much it shares with one that was.
#include "parasol/apps/lda/word_ids.h"

#include <random>
#include <string>

#include <gtest/gtest.h>

namespace parasol::apps::lda {
namespace {

TEST(WordIds, FindsWhatWasAddedAndNothingElse) {
  WordIds ids;
  EXPECT_EQ(ids.Find("topic"), nullptr);
  ids.Add("topic", 7);
  ids.Add("", 3);  // the table takes any string; the tokeniser never gives an empty one
  ASSERT_NE(ids.Find("topic"), nullptr);
  EXPECT_EQ(*ids.Find("topic"), 7u);
  EXPECT_EQ(*ids.Find(""), 3u);
  // Prefixes, extensions and words equal in their first eight bytes are other words.
  using namespace std::string_view_literals;
  for (std::string_view other : {"topi"sv, "topics"sv, "Topic"sv, "topic\0"sv})
    EXPECT_EQ(ids.Find(other), nullptr) << other;
  ids.Add("abcdefghijklmnop", 1);
  ids.Add("abcdefghijklmnoq", 2);
  EXPECT_EQ(*ids.Find("abcdefghijklmnop"), 1u);
  EXPECT_EQ(*ids.Find("abcdefghijklmnoq"), 2u);
  EXPECT_EQ(ids.Find("abcdefghijklmno"), nullptr);
  EXPECT_EQ(ids.size(), 4u);
}

TEST(WordIds, TheFoundNumberCanBeChanged) {
  WordIds ids;
  ids.Add("count", 0);
  for (int i = 0; i < 5; ++i) ++*ids.Find("count");
  EXPECT_EQ(*ids.Find("count"), 5u);
}

// 200,000 random words of 1 to 30 letters (the tokeniser's lengths), the table growing from its
// first 1,024 slots: each is found with the number it was added with, and as many words again,
// each differing from an added word in one letter, are not found unless they were added too.
TEST(WordIds, ManyWordsThroughGrowth) {
  std::mt19937_64 rng(11);
  auto random_word = [&] {
    std::string w(1 + rng() % 30, 'a');
    for (char& c : w) c = static_cast<char>('a' + rng() % 26);
    return w;
  };
  WordIds ids;
  std::vector<std::string> words;
  for (uint32_t i = 0; words.size() < 200000; ++i) {
    std::string w = random_word();
    if (ids.Find(w) != nullptr) continue;  // drawn twice (short words)
    ids.Add(w, static_cast<uint32_t>(words.size()));
    words.push_back(std::move(w));
  }
  ASSERT_EQ(ids.size(), words.size());
  for (uint32_t i = 0; i < words.size(); ++i) {
    const uint32_t* found = ids.Find(words[i]);
    ASSERT_NE(found, nullptr) << words[i];
    ASSERT_EQ(*found, i) << words[i];
  }
  size_t absent = 0;
  for (const std::string& w : words) {
    std::string near = w;
    near[rng() % near.size()] ^= 0x01;  // another letter (or a backquote from 'a')
    const uint32_t* found = ids.Find(near);
    if (found == nullptr) {
      ++absent;
      continue;
    }
    ASSERT_EQ(words[*found], near);  // found only as the word it is
  }
  EXPECT_GT(absent, words.size() / 2);
}

}  // namespace
}  // namespace parasol::apps::lda
