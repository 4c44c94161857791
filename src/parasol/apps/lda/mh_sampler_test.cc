// The samplers' stationary distribution on a corpus small enough to enumerate: 5 tokens and 3
// topics give 243 assignments (2 tokens and 20 topics, 400), whose exact posterior p(z | w) is
// computed here from the LDA formula. A long chain's visits, thinned so that kept states are nearly
// independent, must match it by a chi-square test.
#include <cmath>
#include <map>
#include <numeric>

#include <gtest/gtest.h>

#include "parasol/apps/lda/gibbs_sampler.h"
#include "parasol/apps/lda/lda_testing.h"
#include "parasol/apps/lda/mh_sampler.h"
#include "parasol/apps/lda/token_layout.h"

namespace parasol::apps::lda {
namespace {

constexpr uint32_t kTopics = 3;

Corpus TinyCorpus() {
  Corpus c;
  c.vocab = {"a", "b", "c"};
  std::vector<uint32_t> d0{0, 1, 1}, d1{2, 0};
  c.AddDocument("0", d0);
  c.AddDocument("1", d1);
  return c;
}

// log p(w, z) up to a constant, from the counts of assignment z (corpus order).
double LogJoint(const Corpus& c, const std::vector<uint32_t>& z, const std::vector<double>& alpha,
                double beta) {
  const auto topics = static_cast<uint32_t>(alpha.size());
  std::vector<std::vector<int>> ndk(c.num_docs(), std::vector<int>(topics, 0));
  std::vector<std::vector<int>> nwk(c.vocab.size(), std::vector<int>(topics, 0));
  std::vector<int> nk(topics, 0);
  for (size_t d = 0; d < c.num_docs(); ++d) {
    for (uint64_t i = c.doc_offsets[d]; i < c.doc_offsets[d + 1]; ++i) {
      ++ndk[d][z[i]], ++nwk[c.words[i]][z[i]], ++nk[z[i]];
    }
  }
  double s = 0;
  for (const auto& row : ndk) {
    for (uint32_t k = 0; k < topics; ++k) s += std::lgamma(row[k] + alpha[k]);
  }
  for (const auto& row : nwk) {
    for (int n : row) s += std::lgamma(n + beta);
  }
  for (int n : nk) s -= std::lgamma(n + beta * static_cast<double>(c.vocab.size()));
  return s;
}

uint32_t StateIndex(const std::vector<uint32_t>& z, uint32_t topics = kTopics) {
  uint32_t s = 0;
  for (uint32_t t : z) s = s * topics + t;
  return s;
}

// Over alpha.size() topics.
std::vector<double> ExactPosterior(const Corpus& c, const std::vector<double>& alpha, double beta) {
  const size_t n = c.num_tokens();
  const auto topics = static_cast<uint32_t>(alpha.size());
  const auto states = static_cast<uint32_t>(std::pow(topics, n));
  std::vector<double> p(states);
  std::vector<uint32_t> z(n);
  for (uint32_t s = 0; s < states; ++s) {
    for (size_t i = 0, v = s; i < n; ++i, v /= topics) z[n - 1 - i] = static_cast<uint32_t>(v % topics);
    p[s] = std::exp(LogJoint(c, z, alpha, beta));
  }
  const double sum = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& x : p) x /= sum;
  return p;
}

// Pearson's statistic over the states and the critical value at p = 0.0005 (Wilson-Hilferty).
void ExpectMatches(const std::vector<uint64_t>& visits, const std::vector<double>& exact) {
  const double total = static_cast<double>(std::accumulate(visits.begin(), visits.end(), uint64_t{0}));
  double chi2 = 0, tv = 0;
  for (size_t s = 0; s < exact.size(); ++s) {
    const double expected = total * exact[s];
    ASSERT_GT(expected, 5.0) << "state " << s << ": too rare for the test";
    chi2 += (visits[s] - expected) * (visits[s] - expected) / expected;
    tv += std::fabs(visits[s] / total - exact[s]) / 2;
  }
  const double k = static_cast<double>(exact.size() - 1), z = 3.29;
  const double critical = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
  std::cout << "chi-square " << chi2 << " (critical " << critical << "), total variation " << tv << "\n";
  EXPECT_LT(chi2, critical);
}

struct Setting {
  SamplerKind sampler;
  uint32_t mh_steps;
  bool asymmetric = false;  // alpha 0.25, 0.5, 1.0 rather than 0.4 for every topic
  TopicBits bits = TopicBits::k32;
};

class Stationary : public ::testing::TestWithParam<Setting> {};

TEST_P(Stationary, VisitsMatchTheExactPosterior) {
  const Corpus c = TinyCorpus();
  LdaParams p{.topics = kTopics,
              .alpha = 0.4,
              .beta = 0.3,
              .vocab_size = 3,
              .mh_steps = GetParam().mh_steps,
              .sampler = GetParam().sampler};
  if (GetParam().asymmetric) p.topic_alpha = {0.25, 0.5, 1.0};
  const std::vector<double> exact = ExactPosterior(c, p.Alphas(), p.beta);
  std::vector<size_t> cut{0, c.num_docs()};
  std::vector<uint32_t> group(c.vocab.size(), 0);
  Rng init(7);
  TokenLayout layout(c, 0, c.num_docs(), cut, group, 1, GetParam().bits);
  layout.DrawTopics(c, kTopics, init);
  ProposalTables tables = MakeProposalTables(layout, p);
  std::vector<int64_t> totals(kTopics, 0);
  for (uint32_t t : layout.CorpusOrderTopics(c)) ++totals[t];
  MhSampler mh(p);
  GibbsSampler gibbs(p);
  HugePageVector<int32_t> table = GibbsSampler::CountWords(layout, kTopics);
  auto add = [&](const std::vector<int64_t>& delta) {
    for (uint32_t k = 0; k < kTopics; ++k) totals[k] += delta[k];
  };
  std::vector<uint64_t> visits(exact.size(), 0);
  constexpr int kKept = 200000, kThin = 8, kBurnIn = 100;
  for (int it = 0; it < kBurnIn + kKept * kThin; ++it) {
    Rng rng(11, 0, 0, static_cast<uint64_t>(it));
    if (p.sampler == SamplerKind::kGibbs) {
      gibbs.BeginRound(totals);
      gibbs.DocPass(layout, 0, 0, table, rng);
      add(gibbs.TotalsDelta());
    } else {
      mh.BeginRound(totals);
      mh.DocPass(layout, tables, 0, 0, rng, nullptr);
      add(mh.TotalsDelta());
      mh.BeginRound(totals);
      mh.WordPass(layout, tables, std::vector<uint32_t>{0, 1, 2}, 0, rng, nullptr);
      add(mh.TotalsDelta());
    }
    if (it >= kBurnIn && (it - kBurnIn) % kThin == 0) ++visits[StateIndex(layout.CorpusOrderTopics(c))];
  }
  ASSERT_TRUE(layout.Consistent());
  ExpectMatches(visits, exact);
}

INSTANTIATE_TEST_SUITE_P(Samplers, Stationary,
                         ::testing::Values(Setting{SamplerKind::kMh, 1}, Setting{SamplerKind::kMh, 2},
                                           // the second step's proposal is drawn ahead, a third's not
                                           Setting{SamplerKind::kMh, 3}, Setting{SamplerKind::kGibbs, 1},
                                           Setting{SamplerKind::kMh, 1, true},
                                           Setting{SamplerKind::kMh, 2, true},
                                           Setting{SamplerKind::kGibbs, 1, true},
                                           Setting{SamplerKind::kMh, 2, false, TopicBits::k16},
                                           Setting{SamplerKind::kGibbs, 1, false, TopicBits::k16}),
                         [](const auto& param_info) {
                           return std::string(param_info.param.sampler == SamplerKind::kMh ? "Mh" : "Gibbs") +
                                  std::to_string(param_info.param.mh_steps) +
                                  (param_info.param.asymmetric ? "AsymmetricAlpha" : "") +
                                  (param_info.param.bits == TopicBits::k16 ? "SixteenBit" : "");
                         });

// A layout of 16-bit topics runs the chain of one of 32-bit topics, draw for draw: over 65,536
// topics (the most 16 bits hold; every topic's proposal and move at the top of the range too) for
// the MH sampler, two document groups and three word groups, and over 300 for the Gibbs sampler.
TEST(Samplers, SixteenBitTopicsRunTheSameChainAsThirtyTwoBit) {
  auto s = testing::GenerateLda(6, 120, 80, 40, 0.2, 21);
  const Corpus& c = s.corpus;
  std::vector<size_t> cut{0, 37, c.num_docs()};
  std::vector<uint32_t> group(c.vocab.size());
  for (uint32_t w = 0; w < group.size(); ++w) group[w] = (w * 5) % 3;
  for (const SamplerKind kind : {SamplerKind::kMh, SamplerKind::kGibbs}) {
    const bool mh = kind == SamplerKind::kMh;
    const uint32_t topics = mh ? 65536 : 300;
    LdaParams p{
        .topics = topics, .alpha = 0.1, .beta = 0.01, .vocab_size = 120, .mh_steps = 2, .sampler = kind};
    std::vector<TokenLayout> layouts;
    std::vector<std::vector<int64_t>> totals(2, std::vector<int64_t>(topics, 0));
    std::vector<HugePageVector<int32_t>> tables;
    for (const TopicBits bits : {TopicBits::k16, TopicBits::k32}) {
      layouts.emplace_back(c, 0, c.num_docs(), cut, group, 3, bits);
      Rng init(5);
      layouts.back().DrawTopics(c, topics, init);
      for (uint32_t t : layouts.back().CorpusOrderTopics(c)) ++totals[layouts.size() - 1][t];
      tables.push_back(GibbsSampler::CountWords(layouts.back(), topics));
    }
    const ProposalTables proposals = MakeProposalTables(layouts[0], p);
    std::vector<uint32_t> words_of[3];
    for (uint32_t w = 0; w < group.size(); ++w) words_of[group[w]].push_back(w);
    for (uint32_t it = 0; it < 20; ++it) {
      for (size_t l = 0; l < 2; ++l) {
        for (uint32_t g = 0; g < 2; ++g) {
          for (uint32_t h = 0; h < 3; ++h) {
            Rng rng(31, it, g, h);
            MhSampler m(p);
            GibbsSampler gibbs(p);
            auto add = [&](const std::vector<int64_t>& delta) {
              for (uint32_t k = 0; k < topics; ++k) totals[l][k] += delta[k];
            };
            if (mh) {
              m.BeginRound(totals[l]);
              m.DocPass(layouts[l], proposals, g, h, rng, nullptr);
              add(m.TotalsDelta());
              m.BeginRound(totals[l]);
              m.WordPass(layouts[l], proposals, words_of[h], g, rng, nullptr);
              add(m.TotalsDelta());
            } else {
              gibbs.BeginRound(totals[l]);
              gibbs.DocPass(layouts[l], g, h, tables[l], rng);
              add(gibbs.TotalsDelta());
            }
          }
        }
      }
      ASSERT_EQ(layouts[0].CorpusOrderTopics(c), layouts[1].CorpusOrderTopics(c)) << "iteration " << it;
      ASSERT_EQ(totals[0], totals[1]);
    }
    EXPECT_TRUE(layouts[0].Consistent());
    EXPECT_EQ(tables[0], tables[1]);
    // The chain moved: a stuck sampler would pass the comparison too.
    Rng init(5);
    TokenLayout start(c, 0, c.num_docs(), cut, group, 3);
    start.DrawTopics(c, topics, init);
    EXPECT_NE(layouts[0].CorpusOrderTopics(c), start.CorpusOrderTopics(c));
  }
}

// The Gibbs sampler's draw searches its weights block by block (8 topics a block): 20 topics give
// three blocks, the last one padded, and an alpha that differs by topic makes every topic's weight
// its own. Two tokens of one word in two documents: 400 assignments.
TEST(GibbsSampler, DrawsFromEveryBlockByTheExactConditional) {
  constexpr uint32_t kManyTopics = 20;
  Corpus c;
  c.vocab = {"a", "b"};
  std::vector<uint32_t> d0{0}, d1{0};
  c.AddDocument("0", d0);
  c.AddDocument("1", d1);
  LdaParams p{.topics = kManyTopics, .beta = 0.3, .vocab_size = 2, .sampler = SamplerKind::kGibbs};
  for (uint32_t k = 0; k < kManyTopics; ++k) p.topic_alpha.push_back(0.5 + 0.05 * k);
  const std::vector<double> exact = ExactPosterior(c, p.Alphas(), p.beta);
  std::vector<size_t> cut{0, c.num_docs()};
  std::vector<uint32_t> group(c.vocab.size(), 0);
  Rng init(7);
  TokenLayout layout(c, 0, c.num_docs(), cut, group, 1);
  layout.DrawTopics(c, kManyTopics, init);
  std::vector<int64_t> totals(kManyTopics, 0);
  for (uint32_t t : layout.CorpusOrderTopics(c)) ++totals[t];
  GibbsSampler gibbs(p);
  HugePageVector<int32_t> table = GibbsSampler::CountWords(layout, kManyTopics);
  std::vector<uint64_t> visits(exact.size(), 0);
  constexpr int kKept = 400000, kThin = 2;
  for (int it = 0; it < kKept * kThin; ++it) {
    Rng rng(13, 0, 0, static_cast<uint64_t>(it));
    gibbs.BeginRound(totals);
    gibbs.DocPass(layout, 0, 0, table, rng);
    const std::vector<int64_t> delta = gibbs.TotalsDelta();
    for (uint32_t k = 0; k < kManyTopics; ++k) totals[k] += delta[k];
    if (it % kThin == 0) ++visits[StateIndex(layout.CorpusOrderTopics(c), kManyTopics)];
  }
  ASSERT_TRUE(layout.Consistent());
  EXPECT_EQ(table, GibbsSampler::CountWords(layout, kManyTopics));  // the counts followed every move
  ExpectMatches(visits, exact);
}

}  // namespace
}  // namespace parasol::apps::lda
