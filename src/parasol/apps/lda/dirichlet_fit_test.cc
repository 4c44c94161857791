#include "parasol/apps/lda/dirichlet_fit.h"

#include <barrier>
#include <cmath>
#include <random>
#include <thread>

#include <gtest/gtest.h>

namespace parasol::apps::lda {
namespace {

TEST(Digamma, MatchesKnownValues) {
  // psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2, psi(10) = H_9 - gamma.
  const double euler = 0.57721566490153286;
  EXPECT_NEAR(Digamma(1.0), -euler, 1e-12);
  EXPECT_NEAR(Digamma(0.5), -euler - 2 * std::log(2.0), 1e-12);
  double h9 = 0;
  for (int i = 1; i <= 9; ++i) h9 += 1.0 / i;
  EXPECT_NEAR(Digamma(10.0), h9 - euler, 1e-12);
  // -1/x - gamma + zeta(2) x - zeta(3) x^2 near 0
  EXPECT_NEAR(Digamma(1e-3), -1000.0 - euler + 1.6449340668 * 1e-3 - 1.2020569032 * 1e-6, 1e-8);
}

TEST(Digamma, DifferenceIsTheSumOfReciprocals) {
  for (double a : {1e-4, 0.01, 0.3, 2.5, 40.0}) {
    for (uint64_t n : {0u, 1u, 7u, 16u, 17u, 250u, 5000u}) {
      double sum = 0;
      for (uint64_t i = 0; i < n; ++i) sum += 1 / (a + static_cast<double>(i));
      EXPECT_NEAR(DigammaDifference(a, n), sum, 1e-10 * std::max(1.0, sum)) << a << " " << n;
    }
  }
}

TEST(CountTally, ListsEachNonzeroCountOnce) {
  CountTally t;
  for (uint32_t c : {3u, 1u, 3u, 0u, 9u, 3u}) t.Add(c);
  EXPECT_EQ(t.Histogram(), (CountHistogram{{1, 1}, {3, 3}, {9, 1}}));
}

// Documents of `length` tokens: theta_d ~ Dirichlet(alpha), n_dk ~ Multinomial(length, theta_d).
std::vector<std::vector<uint32_t>> DrawCounts(const std::vector<double>& alpha, uint32_t docs,
                                              uint32_t length, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint32_t>> out;
  for (uint32_t d = 0; d < docs; ++d) {
    std::vector<double> theta;
    for (double a : alpha) theta.push_back(std::gamma_distribution<double>(a, 1.0)(rng) + 1e-300);
    std::discrete_distribution<uint32_t> topic(theta.begin(), theta.end());
    std::vector<uint32_t> n(alpha.size(), 0);
    for (uint32_t i = 0; i < length; ++i) ++n[topic(rng)];
    out.push_back(n);
  }
  return out;
}

struct Histograms {
  std::vector<CountHistogram> topics;
  CountHistogram lengths;
};

Histograms Tally(const std::vector<std::vector<uint32_t>>& counts, size_t begin, size_t end) {
  const size_t k = counts[0].size();
  std::vector<CountTally> topic(k);
  CountTally lengths;
  for (size_t d = begin; d < end; ++d) {
    uint32_t n = 0;
    for (size_t t = 0; t < k; ++t) topic[t].Add(counts[d][t]), n += counts[d][t];
    lengths.Add(n);
  }
  Histograms h;
  for (const auto& t : topic) h.topics.push_back(t.Histogram());
  h.lengths = lengths.Histogram();
  return h;
}

TEST(FitAsymmetricAlpha, RecoversTheAlphaTheCountsWereDrawnWith) {
  const std::vector<double> truth{0.05, 0.1, 0.2, 0.4, 0.8};
  const auto counts = DrawCounts(truth, 4000, 100, 7);
  const Histograms h = Tally(counts, 0, counts.size());
  const std::vector<double> fit = FitAsymmetricAlpha(h.topics, h.lengths, std::vector<double>(5, 1.0), {});
  for (size_t k = 0; k < truth.size(); ++k) EXPECT_NEAR(fit[k], truth[k], 0.07 * truth[k]) << k;
}

TEST(FitAsymmetricAlpha, TwoProcessesEachWithHalfTheDocumentsFitWhatOneFits) {
  const std::vector<double> truth{0.3, 0.03, 1.5};
  const auto counts = DrawCounts(truth, 3000, 60, 11);
  const Histograms all = Tally(counts, 0, counts.size());
  const std::vector<double> one = FitAsymmetricAlpha(all.topics, all.lengths, {1, 1, 1}, {});
  // Two "processes" as threads: each posts its parts in its own slot, then both read the sums.
  std::vector<double> slots[2];
  std::barrier sync(2);
  auto sum_for = [&](int me) -> SumAcross {
    return [&, me](std::span<double> parts) {
      slots[me].assign(parts.begin(), parts.end());
      sync.arrive_and_wait();
      for (size_t i = 0; i < parts.size(); ++i) parts[i] = slots[0][i] + slots[1][i];
      sync.arrive_and_wait();
    };
  };
  std::vector<double> fits[2];
  std::thread other([&] {
    const Histograms h = Tally(counts, 1300, counts.size());
    fits[1] = FitAsymmetricAlpha(h.topics, h.lengths, {1, 1, 1}, sum_for(1));
  });
  const Histograms h = Tally(counts, 0, 1300);
  fits[0] = FitAsymmetricAlpha(h.topics, h.lengths, {1, 1, 1}, sum_for(0));
  other.join();
  for (size_t k = 0; k < truth.size(); ++k) {
    EXPECT_EQ(fits[0][k], fits[1][k]) << k;
    EXPECT_NEAR(fits[0][k], one[k], 1e-9 * one[k]) << k;
    EXPECT_NEAR(one[k], truth[k], 0.1 * truth[k]) << k;
  }
}

TEST(FitAsymmetricAlpha, ATopicNoDocumentUsesStopsAtTheFloor) {
  const auto counts = DrawCounts({0.5, 0.5}, 500, 50, 3);
  std::vector<std::vector<uint32_t>> three;
  for (const auto& c : counts) three.push_back({c[0], c[1], 0});
  const Histograms h = Tally(three, 0, three.size());
  FitOptions o;
  const std::vector<double> fit = FitAsymmetricAlpha(h.topics, h.lengths, {1, 1, 1}, {}, o);
  EXPECT_EQ(fit[2], o.floor);
  EXPECT_NEAR(fit[0], 0.5, 0.1);
}

TEST(FitSymmetricBeta, RecoversTheBetaTheTopicsWereDrawnWith) {
  // Topics phi_k ~ Dirichlet(beta) over V words, 3,000 tokens of each.
  const double truth = 0.05;
  const uint32_t vocab = 2000, topics = 40;
  std::mt19937_64 rng(5);
  CountTally tally;
  std::vector<int64_t> totals;
  for (uint32_t k = 0; k < topics; ++k) {
    std::vector<double> phi(vocab);
    for (double& p : phi) p = std::gamma_distribution<double>(truth, 1.0)(rng) + 1e-300;
    std::discrete_distribution<uint32_t> word(phi.begin(), phi.end());
    std::vector<uint32_t> n(vocab, 0);
    for (int i = 0; i < 3000; ++i) ++n[word(rng)];
    for (uint32_t c : n) tally.Add(c);
    totals.push_back(3000);
  }
  const double fit = FitSymmetricBeta(tally.Histogram(), totals, vocab, 0.5, {});
  EXPECT_NEAR(fit, truth, 0.1 * truth);
}

}  // namespace
}  // namespace parasol::apps::lda
