// The two orders of a process's tokens: every token appears once in each, the orders point at
// each other, the tiles of the thread groups partition the tokens, and corpus order round-trips.
#include "parasol/apps/lda/token_layout.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <set>

#include <gtest/gtest.h>

#include "parasol/apps/lda/lda_testing.h"

namespace parasol::apps::lda {
namespace {

TEST(TokenLayout, OrdersAgreeAndTilesPartitionTheTokens) {
  auto s = testing::GenerateLda(4, 40, 60, 30, 0.3, 5);
  const Corpus& c = s.corpus;
  const size_t d0 = 7, d1 = 50;  // a process's share
  std::vector<size_t> cut{0, 10, 25, d1 - d0};
  std::vector<uint32_t> group(c.vocab.size());
  for (uint32_t w = 0; w < group.size(); ++w) group[w] = (w * 7) % 5;  // 5 word groups
  Rng rng(3);
  TokenLayout l(c, d0, d1, cut, group, 5);
  l.DrawTopics(c, 4, rng);
  ASSERT_EQ(l.num_tokens(), c.doc_offsets[d1] - c.doc_offsets[d0]);
  EXPECT_TRUE(l.Consistent());
  // Each token's word in document order is the word whose range holds its word-order position.
  for (uint32_t i = 0; i < l.num_tokens(); ++i) {
    const uint32_t j = l.doc_cross()[i], w = l.doc_words()[i];
    EXPECT_GE(j, l.word_begin(w));
    EXPECT_LT(j, l.word_end(w));
    EXPECT_GE(i, l.doc_begin(l.word_docs()[j]));
    EXPECT_LT(i, l.doc_end(l.word_docs()[j]));
  }
  // Tiles (document group g, word group h) cover each token exactly once, from both sides.
  std::vector<int> seen_doc(l.num_tokens(), 0), seen_word(l.num_tokens(), 0);
  for (uint32_t g = 0; g < 3; ++g) {
    for (uint32_t h = 0; h < 5; ++h) {
      for (size_t d = l.group_doc_begin(g); d < l.group_doc_end(g); ++d) {
        for (uint32_t i = l.doc_group_begin(d, h); i < l.doc_group_end(d, h); ++i) {
          ++seen_doc[i];
          EXPECT_EQ(group[l.doc_words()[i]], h);
        }
      }
      for (uint32_t w = 0; w < c.vocab.size(); ++w) {
        if (group[w] != h) continue;
        for (uint32_t j = l.word_group_begin(w, g); j < l.word_group_end(w, g); ++j) {
          ++seen_word[l.word_cross()[j]];
          EXPECT_GE(l.word_docs()[j], l.group_doc_begin(g));
          EXPECT_LT(l.word_docs()[j], l.group_doc_end(g));
        }
      }
    }
  }
  EXPECT_EQ(std::set<int>(seen_doc.begin(), seen_doc.end()), std::set<int>{1});
  EXPECT_EQ(std::set<int>(seen_word.begin(), seen_word.end()), std::set<int>{1});
  // Corpus order: setting topics t_i = i mod 4 and reading them back gives the same sequence,
  // and each token's topic sits with its own word.
  std::vector<uint32_t> topics(l.num_tokens());
  for (size_t i = 0; i < topics.size(); ++i) topics[i] = static_cast<uint32_t>(i % 4);
  l.SetCorpusOrderTopics(c, topics);
  EXPECT_EQ(l.CorpusOrderTopics(c), topics);
  EXPECT_TRUE(l.Consistent());
  std::multiset<std::pair<uint32_t, uint32_t>> from_corpus, from_layout;
  for (uint64_t t = c.doc_offsets[d0]; t < c.doc_offsets[d1]; ++t) {
    from_corpus.insert({c.words[t], topics[t - c.doc_offsets[d0]]});
  }
  for (uint32_t i = 0; i < l.num_tokens(); ++i)
    from_layout.insert({l.doc_words()[i], l.doc_topics<uint32_t>()[i]});
  EXPECT_EQ(from_corpus, from_layout);
}

// 16-bit topics hold every topic below 65,536, in both orders, as 32-bit ones do, in half the bytes.
TEST(TokenLayout, SixteenBitTopicsHoldWhatThirtyTwoBitOnesDo) {
  auto s = testing::GenerateLda(4, 40, 60, 30, 0.3, 9);
  const Corpus& c = s.corpus;
  std::vector<size_t> cut{0, 20, c.num_docs()};
  std::vector<uint32_t> group(c.vocab.size());
  for (uint32_t w = 0; w < group.size(); ++w) group[w] = w % 3;
  TokenLayout narrow(c, 0, c.num_docs(), cut, group, 3, TopicBits::k16);
  TokenLayout wide(c, 0, c.num_docs(), cut, group, 3, TopicBits::k32);
  EXPECT_EQ(narrow.topic_bits(), TopicBits::k16);
  EXPECT_EQ(wide.bytes() - narrow.bytes(), 2 * sizeof(uint16_t) * c.num_tokens());
  // The top of the range, and values whose low 16 bits are those of others.
  std::vector<uint32_t> topics(c.num_tokens());
  const uint32_t pattern[] = {65535, 0, 40000, 255, 256, 65280, 1};
  for (size_t i = 0; i < topics.size(); ++i) topics[i] = pattern[i % std::size(pattern)];
  narrow.SetCorpusOrderTopics(c, topics);
  wide.SetCorpusOrderTopics(c, topics);
  EXPECT_EQ(narrow.CorpusOrderTopics(c), topics);
  EXPECT_EQ(wide.CorpusOrderTopics(c), topics);
  EXPECT_TRUE(narrow.Consistent());
  for (uint32_t i = 0; i < c.num_tokens(); ++i) {
    ASSERT_EQ(narrow.doc_topics<uint16_t>()[i], wide.doc_topics<uint32_t>()[i]) << i;
    ASSERT_EQ(narrow.word_topics<uint16_t>()[i], wide.word_topics<uint32_t>()[i]) << i;
  }
  // The same draws over all 65,536 topics.
  Rng a(17), b(17);
  narrow.DrawTopics(c, 65536, a);
  wide.DrawTopics(c, 65536, b);
  const std::vector<uint32_t> drawn = wide.CorpusOrderTopics(c);
  EXPECT_EQ(narrow.CorpusOrderTopics(c), drawn);
  EXPECT_GT(*std::max_element(drawn.begin(), drawn.end()), 60000u);
  EXPECT_TRUE(narrow.Consistent());
}

}  // namespace
}  // namespace parasol::apps::lda
