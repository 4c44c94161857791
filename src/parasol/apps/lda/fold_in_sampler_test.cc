#include "parasol/apps/lda/fold_in_sampler.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace parasol::apps::lda {
namespace {

// Documents of two tokens (word 0, word 1) folded into a fixed 3-topic model. With the model fixed,
// a document's posterior is exact and small: p(z1 = a, z2 = b) is proportional to
// phi(a, w0) phi(b, w1) alpha_a (alpha_b + [a = b]) (the Polya urn of the document's topics), with
// phi(k, w) = (n_wk + beta) / (n_k + V beta). Many independent documents after a few sweeps give
// the chain's distribution, which must be that one: for a symmetric alpha and for an asymmetric one
// (its document proposals drawn through alpha's alias table).
std::array<double, 9> FoldedJoint(const LdaParams& p) {
  const std::vector<uint64_t> word_counts{100, 100};
  WordTopicTable table(3, word_counts, /*dense_min_count=*/0);
  const int counts[2][3] = {{30, 5, 65}, {10, 60, 30}};
  std::vector<int64_t> totals(3, 0);
  for (uint32_t w = 0; w < 2; ++w) {
    for (uint32_t k = 0; k < 3; ++k) table.Add(w, k, counts[w][k]), totals[k] += counts[w][k];
  }
  constexpr size_t kDocs = 40000;
  TokenStore ts;
  Rng rng(11);
  for (size_t d = 0; d < kDocs; ++d) {
    for (uint32_t w = 0; w < 2; ++w) ts.words.push_back(w), ts.z.push_back(rng.Below(3));
    ts.doc_offsets.push_back(ts.words.size());
  }
  const std::vector<uint32_t> words{0, 1};
  FoldInSampler sampler(p, table, totals, words);
  for (int sweep = 0; sweep < 30; ++sweep) sampler.Sample(ts, 0, kDocs, table, rng);
  std::array<double, 9> joint{};
  for (size_t d = 0; d < kDocs; ++d) joint[ts.z[2 * d] * 3 + ts.z[2 * d + 1]] += 1.0 / kDocs;
  return joint;
}

void ExpectExactPosterior(const LdaParams& p) {
  const double n[2][3] = {{30, 5, 65}, {10, 60, 30}};
  double nk[3], phi[3][2];
  for (int k = 0; k < 3; ++k) nk[k] = n[0][k] + n[1][k];
  for (int k = 0; k < 3; ++k) {
    for (int w = 0; w < 2; ++w) phi[k][w] = (n[w][k] + p.beta) / (nk[k] + 2 * p.beta);
  }
  std::array<double, 9> want{};
  double sum = 0;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      want[a * 3 + b] = phi[a][0] * phi[b][1] * p.Alpha(a) * (p.Alpha(b) + (a == b ? 1 : 0));
      sum += want[a * 3 + b];
    }
  }
  const std::array<double, 9> got = FoldedJoint(p);
  for (int i = 0; i < 9; ++i) {
    // 40,000 documents: a cell's standard deviation is at most 0.0025.
    EXPECT_NEAR(got[i], want[i] / sum, 0.0125) << "z1 = " << i / 3 << ", z2 = " << i % 3;
  }
}

TEST(FoldInSampler, SymmetricAlphaReachesTheExactPosterior) {
  LdaParams p;
  p.topics = 3;
  p.alpha = 0.5;
  p.beta = 0.5;
  p.vocab_size = 2;
  ExpectExactPosterior(p);
}

TEST(FoldInSampler, AsymmetricAlphaReachesTheExactPosterior) {
  LdaParams p;
  p.topics = 3;
  p.topic_alpha = {0.2, 0.7, 2.1};
  p.beta = 0.5;
  p.vocab_size = 2;
  ExpectExactPosterior(p);
}

}  // namespace
}  // namespace parasol::apps::lda
