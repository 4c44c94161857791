#include "parasol/apps/lda/loglik.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "parasol/apps/lda/corpus.h"
#include "parasol/apps/lda/token_layout.h"
#include "parasol/core/rng.h"

namespace parasol::apps::lda {
namespace {

// The likelihood of a hand-counted state: two documents, two words, two topics.
TEST(LogLikelihood, MatchesTheFormula) {
  LdaParams p{.topics = 2, .alpha = 0.5, .beta = 0.1, .vocab_size = 2};
  Corpus c;
  c.vocab = {"a", "b"};
  std::vector<uint32_t> d0{0, 0, 1}, d1{1};
  c.AddDocument("0", d0);
  c.AddDocument("1", d1);
  std::vector<uint32_t> group(2, 0);
  std::vector<size_t> cut{0, 2};
  TokenLayout layout(c, 0, 2, cut, group, 1);
  // doc 0: a->0, a->0, b->1; doc 1: b->1
  std::vector<uint32_t> z{0, 0, 1, 1};
  layout.SetCorpusOrderTopics(c, z);
  std::vector<int64_t> totals{2, 2};
  LogLikelihood ll(p);
  std::vector<int32_t> scratch(2, 0);
  double got =
      ll.DocPart(layout, 0, 2, scratch) + ll.WordsPart(layout, 0, 2, scratch) + ll.TotalsPart(totals);
  auto lg = [](double x) { return std::lgamma(x); };
  // Documents: n_0 = (2, 1), n_1 = (0, 1). Words: n_a = (2, 0), n_b = (0, 2); totals (2, 2).
  double docs = 2 * (lg(1.0) - 2 * lg(0.5)) + lg(2.5) + lg(1.5) - lg(4.0) + lg(0.5) + lg(1.5) - lg(2.0);
  double wordsll = 2 * (lg(0.2) - 2 * lg(0.1)) + 2 * (lg(2.1) + lg(0.1)) - 2 * lg(2.2);
  EXPECT_NEAR(got, docs + wordsll, 1e-9);
}

}  // namespace
}  // namespace parasol::apps::lda
