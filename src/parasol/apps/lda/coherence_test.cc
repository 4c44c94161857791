#include "parasol/apps/lda/coherence.h"

#include <cmath>

#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol::apps::lda {
namespace {

// Words a=0, b=1, c=2, d=3 in five documents (repeats within a document count once):
//   {a, b, a}, {a, b, c}, {a, c}, {d}, {a, d, b}
// so D(a)=4, D(b)=3, D(c)=2, D(d)=2, D(a,b)=3, D(a,c)=2, D(b,c)=1, D(a,d)=1, D(c,d)=0, N=5.
Corpus Toy() {
  Corpus c;
  c.vocab = {"a", "b", "c", "d"};
  const std::vector<std::vector<uint32_t>> docs{{0, 1, 0}, {0, 1, 2}, {0, 2}, {3}, {0, 3, 1}};
  for (size_t d = 0; d < docs.size(); ++d) c.AddDocument(std::to_string(d), docs[d]);
  return c;
}

// NPMI of a pair by the formula, with the counts written out.
double Npmi(double both, double a, double b) {
  const double n = 5;
  return std::log((both / n) / ((a / n) * (b / n))) / -std::log(both / n);
}

TEST(TopicCoherence, EqualsTheFormulasOnAToyCorpus) {
  Coherence c = TopicCoherence(Toy(), {{0, 1, 2}, {2, 3}, {1}});
  ASSERT_EQ(c.umass.size(), 3u);
  // Topic a, b, c: log((D(b,a)+1)/D(a)) + log((D(c,a)+1)/D(a)) + log((D(c,b)+1)/D(b)).
  EXPECT_NEAR(c.umass[0], std::log(4.0 / 4) + std::log(3.0 / 4) + std::log(2.0 / 3), 1e-12);
  EXPECT_NEAR(c.npmi[0], (Npmi(3, 4, 3) + Npmi(2, 4, 2) + Npmi(1, 3, 2)) / 3, 1e-12);
  // Topic c, d: never together.
  EXPECT_NEAR(c.umass[1], std::log(1.0 / 2), 1e-12);
  EXPECT_EQ(c.npmi[1], -1.0);
  // One word: no pair, no figure, and left out of the means.
  EXPECT_TRUE(std::isnan(c.umass[2]));
  EXPECT_TRUE(std::isnan(c.npmi[2]));
  EXPECT_NEAR(c.mean_umass, (c.umass[0] + c.umass[1]) / 2, 1e-12);
  EXPECT_NEAR(c.mean_npmi, (c.npmi[0] + c.npmi[1]) / 2, 1e-12);
}

TEST(TopicCoherence, APairInEveryDocumentHasNpmiOneAndTheOrderMattersForUMass) {
  Corpus c;
  c.vocab = {"x", "y", "z"};
  c.AddDocument("0", std::vector<uint32_t>{0, 1});
  c.AddDocument("1", std::vector<uint32_t>{0, 1, 2});
  Coherence got = TopicCoherence(c, {{0, 1}, {2, 0}, {0, 2}});
  EXPECT_EQ(got.npmi[0], 1.0);
  EXPECT_NEAR(got.umass[0], std::log(3.0 / 2), 1e-12);
  // UMass conditions on the more probable word: D(z)=1, D(x)=2.
  EXPECT_NEAR(got.umass[1], std::log(2.0 / 1), 1e-12);
  EXPECT_NEAR(got.umass[2], std::log(2.0 / 2), 1e-12);
}

// Frequent words are kept as bitsets and rare ones as lists: every kind of pair, counted by
// arithmetic. 640 documents: a in the even ones (320), b in the multiples of 3 (214), c in 0, 6
// and 7, d in 6 and 12; so D(a,b) = 107 (multiples of 6), D(a,c) = D(b,c) = 2, D(a,d) = D(b,d) = 2,
// D(c,d) = 1.
TEST(TopicCoherence, FrequentAndRareWordsMixedEqualTheFormulas) {
  Corpus c;
  c.vocab = {"a", "b", "c", "d", "e"};
  for (uint32_t d = 0; d < 640; ++d) {
    std::vector<uint32_t> words{4};
    if (d % 2 == 0) words.push_back(0);
    if (d % 3 == 0) words.push_back(1);
    if (d == 0 || d == 6 || d == 7) words.push_back(2);
    if (d == 6 || d == 12) words.push_back(3);
    c.AddDocument(std::to_string(d), words);
  }
  // The first topic twice: the second reuses the counted pairs and must give the same.
  Coherence got = TopicCoherence(c, {{0, 1, 2, 3}, {1, 0}, {0, 1, 2, 3}});
  const double umass = std::log(108.0 / 320) + std::log(3.0 / 320) + std::log(3.0 / 214) +
                       std::log(3.0 / 320) + std::log(3.0 / 214) + std::log(2.0 / 3);
  EXPECT_NEAR(got.umass[0], umass, 1e-12);
  EXPECT_EQ(got.umass[2], got.umass[0]);
  EXPECT_NEAR(got.umass[1], std::log(108.0 / 214), 1e-12);
  auto npmi = [](double both, double a, double b) {
    const double n = 640;
    return std::log((both / n) / ((a / n) * (b / n))) / -std::log(both / n);
  };
  EXPECT_NEAR(got.npmi[1], npmi(107, 320, 214), 1e-12);
  const double pairs = npmi(107, 320, 214) + npmi(2, 320, 3) + npmi(2, 214, 3) + npmi(2, 320, 2) +
                       npmi(2, 214, 2) + npmi(1, 3, 2);
  EXPECT_NEAR(got.npmi[0], pairs / 6, 1e-12);
}

TEST(TopicCoherence, AWordOutsideTheVocabularyIsRefused) {
  EXPECT_THROW(TopicCoherence(Toy(), {{0, 9}}), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::apps::lda
