// Sampler correctness: topics of a corpus drawn from the model are recovered, counts stay
// consistent with the topics, and on a real corpus MH reaches Gibbs's likelihood.
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "parasol/apps/lda/lda_testing.h"
#include "parasol/apps/lda/lda_trainer.h"
#include "parasol/apps/lda/loglik.h"
#include "parasol/comm/testing.h"

namespace parasol::apps::lda {
namespace {

LdaResult TrainOne(const Corpus& corpus, const LdaOptions& o) {
  comm::InProcessWorld world(1);
  LdaResult result;
  auto errors =
      comm::testing::RunRanks(world, [&](comm::Context& ctx) { result = TrainLda(ctx, corpus, o); });
  comm::testing::ExpectNoErrors(errors);
  return result;
}

std::vector<std::vector<double>> LearnedTopics(const LdaResult& r, const LdaOptions& o, size_t v) {
  std::vector<std::vector<double>> phi(o.params.topics, std::vector<double>(v));
  for (uint32_t k = 0; k < o.params.topics; ++k) {
    for (uint32_t w = 0; w < v; ++w) {
      phi[k][w] =
          (r.model.Get(w, k) + o.params.beta) / (static_cast<double>(r.totals[k]) + v * o.params.beta);
    }
  }
  return phi;
}

// The model's counts are exactly those of the final topics: every row sums to its word's tokens,
// totals are the column sums, and the documents' topic counts add up to the totals.
void ExpectConsistentCounts(const LdaResult& r, const Corpus& c) {
  auto counts = c.WordCounts();
  std::vector<int64_t> column(r.totals.size(), 0);
  for (uint32_t w = 0; w < c.vocab.size(); ++w) {
    int64_t sum = 0;
    r.model.ForEachNonzero(w, [&](uint32_t k, int32_t n) {
      ASSERT_GT(n, 0);
      sum += n;
      column[k] += n;
    });
    ASSERT_EQ(sum, static_cast<int64_t>(counts[w])) << "word " << w;
  }
  EXPECT_EQ(column, r.totals);
  std::vector<int64_t> docs(r.totals.size(), 0);
  for (const auto& d : r.doc_topics) {
    for (auto [k, n] : d) docs[k] += n;
  }
  EXPECT_EQ(docs, r.totals);
}

class Recovery : public ::testing::TestWithParam<SamplerKind> {};

TEST_P(Recovery, RecoversKnownTopics) {
  auto s = testing::GenerateLda(6, 60, 400, 80, 0.2, 3);
  LdaOptions o;
  o.params = {.topics = 6, .alpha = 0.2, .beta = 0.01, .mh_steps = 2, .sampler = GetParam()};
  o.iterations = 150;
  o.eval_every = 50;
  LdaResult r = TrainOne(s.corpus, o);
  ExpectConsistentCounts(r, s.corpus);
  double distance = testing::MeanTopicDistance(s.topics, LearnedTopics(r, o, 60));
  RecordProperty("mean_topic_distance", std::to_string(distance));
  std::cout << "mean total-variation distance to the true topics: " << distance << "\n";
  // Sampling noise alone (32,000 tokens over 6 x 60 entries) leaves about 0.05.
  EXPECT_LT(distance, 0.12);
  // A random assignment is far from them.
  std::vector<std::vector<double>> flat(6, std::vector<double>(60, 1.0 / 60));
  EXPECT_GT(testing::MeanTopicDistance(s.topics, flat), 0.5);
}

INSTANTIATE_TEST_SUITE_P(Samplers, Recovery, ::testing::Values(SamplerKind::kMh, SamplerKind::kGibbs),
                         [](const ::testing::TestParamInfo<SamplerKind>& p) {
                           return p.param == SamplerKind::kMh ? "Mh" : "Gibbs";
                         });

// The first 600 documents of AP: MH ends within 1% of Gibbs's log-likelihood per token.
TEST(MhVsGibbs, MatchOnARealCorpus) {
  Corpus ap = ReadCorpus(PARASOL_DATA_DIR "/ap/ap.dat", CorpusFormat::kLdac, {});
  Corpus part;
  part.vocab = ap.vocab;
  for (size_t d = 0; d < 600; ++d) part.AddDocument(ap.doc_names[d], ap.doc(d));
  LdaOptions o;
  o.params = {.topics = 20, .alpha = 50.0 / 20, .beta = 0.01, .mh_steps = 2};
  o.iterations = 120;
  o.eval_every = 0;
  o.params.sampler = SamplerKind::kGibbs;
  LdaResult gibbs = TrainOne(part, o);
  o.params.sampler = SamplerKind::kMh;
  LdaResult mh = TrainOne(part, o);
  double g = gibbs.history.back().loglik_per_token, m = mh.history.back().loglik_per_token;
  std::cout << "log-likelihood per token: gibbs " << g << ", mh " << m << "\n";
  EXPECT_LT(std::fabs(m - g), 0.01 * std::fabs(g));
  ExpectConsistentCounts(mh, part);
}

}  // namespace
}  // namespace parasol::apps::lda
