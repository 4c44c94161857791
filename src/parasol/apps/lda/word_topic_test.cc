#include "parasol/apps/lda/word_topic.h"

#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol::apps::lda {
namespace {

std::vector<std::pair<uint32_t, int32_t>> Nonzero(const WordTopicTable& t, uint32_t w) {
  std::vector<std::pair<uint32_t, int32_t>> out(t.max_slots());
  out.resize(t.CopyNonzero(w, out.data()));
  return out;
}

// Random moves of tokens between topics on dense and sparse rows agree with a plain map, and
// rows never hold zeros.
TEST(WordTopicTable, MovesMatchAReferenceMap) {
  const uint32_t k = 64;
  std::vector<uint64_t> counts{40, 30, 3, 1};  // dense from 16 tokens: words 0, 1
  WordTopicTable t(k, counts, 16);
  EXPECT_TRUE(t.dense(0));
  EXPECT_FALSE(t.dense(2));
  std::mt19937 rng(7);
  std::map<std::pair<uint32_t, uint32_t>, int> ref;
  std::vector<std::vector<uint32_t>> z(counts.size());
  for (uint32_t w = 0; w < counts.size(); ++w) {
    for (uint64_t i = 0; i < counts[w]; ++i) {
      uint32_t topic = rng() % k;
      z[w].push_back(topic);
      t.Inc(w, topic);
      ++ref[{w, topic}];
    }
  }
  for (int step = 0; step < 20000; ++step) {
    uint32_t w = rng() % counts.size();
    uint32_t& topic = z[w][rng() % z[w].size()];
    uint32_t to = rng() % 8 == 0 ? rng() % k : (topic + 1) % k;
    t.Dec(w, topic);
    --ref[{w, topic}];
    t.Inc(w, to);
    ++ref[{w, to}];
    topic = to;
  }
  for (uint32_t w = 0; w < counts.size(); ++w) {
    int64_t sum = 0;
    for (auto [topic, c] : Nonzero(t, w)) {
      EXPECT_GT(c, 0);
      sum += c;
    }
    EXPECT_EQ(sum, static_cast<int64_t>(counts[w]));
    for (uint32_t topic = 0; topic < k; ++topic)
      ASSERT_EQ(t.Get(w, topic), (ref[{w, topic}])) << w << " " << topic;
  }
}

// The slots of a sparse row depend on its counts only: filled in two different orders (and
// through deletions), the rows list the same entries in the same order.
TEST(WordTopicTable, SparseLayoutIsIndependentOfHistory) {
  const uint32_t k = 1000;
  std::vector<uint64_t> counts{200};
  WordTopicTable a(k, counts, 1000), b(k, counts, 1000);
  std::mt19937 rng(3);
  std::vector<uint32_t> topics;
  for (int i = 0; i < 200; ++i) topics.push_back(rng() % k);
  for (uint32_t topic : topics) a.Inc(0, topic);
  for (int i = 0; i < 50; ++i) b.Inc(0, rng() % k);  // extra entries, removed below
  std::vector<std::pair<uint32_t, int32_t>> extra = Nonzero(b, 0);
  for (auto it = topics.rbegin(); it != topics.rend(); ++it) b.Inc(0, *it);
  for (auto [topic, c] : extra) {
    for (int32_t i = 0; i < c; ++i) b.Dec(0, topic);
  }
  EXPECT_EQ(Nonzero(a, 0), Nonzero(b, 0));
  EXPECT_THROW(a.Add(0, 5, -1000), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::apps::lda
