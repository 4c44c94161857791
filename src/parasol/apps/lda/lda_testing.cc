#include "parasol/apps/lda/lda_testing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

namespace parasol::apps::lda::testing {

namespace {

// Appends `docs` documents of `doc_length` tokens to s.corpus: each document's topic proportions
// from Dirichlet(alpha) (a gamma draw per topic plus `floor`, so that no topic weighs 0), each
// token's topic from them and its word from s.topics.
void DrawDocuments(SyntheticLda& s, const std::vector<double>& alpha, uint32_t docs, uint32_t doc_length,
                   double floor, std::mt19937_64& rng) {
  std::vector<std::discrete_distribution<uint32_t>> word_of;
  for (const auto& p : s.topics) word_of.emplace_back(p.begin(), p.end());
  std::vector<uint32_t> doc;
  std::vector<double> theta(alpha.size());
  for (uint32_t d = 0; d < docs; ++d) {
    for (size_t t = 0; t < alpha.size(); ++t)
      theta[t] = std::gamma_distribution<double>(alpha[t], 1.0)(rng) + floor;
    std::discrete_distribution<uint32_t> topic_of(theta.begin(), theta.end());
    doc.clear();
    for (uint32_t i = 0; i < doc_length; ++i) doc.push_back(word_of[topic_of(rng)](rng));
    s.corpus.AddDocument(std::to_string(d), doc);
  }
}

}  // namespace

SyntheticLda GenerateLda(uint32_t k, uint32_t v, uint32_t docs, uint32_t doc_length, double alpha,
                         uint64_t seed) {
  return GenerateLda(std::vector<double>(k, alpha), v, docs, doc_length, seed);
}

SyntheticLda GenerateLda(const std::vector<double>& alpha, uint32_t v, uint32_t docs, uint32_t doc_length,
                         uint64_t seed, double shared_mass) {
  const auto k = static_cast<uint32_t>(alpha.size());
  std::mt19937_64 rng(seed);
  SyntheticLda s;
  for (uint32_t w = 0; w < v; ++w) s.corpus.vocab.push_back(fmt::format("w{}", w));
  const uint32_t own = v / k;
  for (uint32_t t = 0; t < k; ++t) {
    std::vector<double> p(v, shared_mass / v);  // a little mass everywhere
    for (uint32_t w = t * own; w < (t + 1) * own; ++w) p[w] += (1 - shared_mass) / own * (1.0 + (w % 3));
    double sum = 0;
    for (double x : p) sum += x;
    for (double& x : p) x /= sum;
    s.topics.push_back(p);
  }
  DrawDocuments(s, alpha, docs, doc_length, 1e-12, rng);
  return s;
}

SyntheticLda DrawLda(const std::vector<double>& alpha, double beta, uint32_t v, uint32_t docs,
                     uint32_t doc_length, uint64_t seed) {
  std::mt19937_64 rng(seed);
  SyntheticLda s;
  for (uint32_t w = 0; w < v; ++w) s.corpus.vocab.push_back(fmt::format("w{}", w));
  for (size_t t = 0; t < alpha.size(); ++t) {
    std::vector<double> phi(v);
    double sum = 0;
    for (double& x : phi) sum += x = std::gamma_distribution<double>(beta, 1.0)(rng) + 1e-300;
    for (double& x : phi) x /= sum;
    s.topics.push_back(std::move(phi));
  }
  DrawDocuments(s, alpha, docs, doc_length, 1e-300, rng);
  return s;
}

namespace {

double Tv(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += std::fabs(a[i] - b[i]);
  return sum / 2;
}

// Best assignment of the first `i` true topics onward, by exhaustive search with pruning (k is
// small in tests).
void Search(const std::vector<std::vector<double>>& cost, size_t i, std::vector<bool>& used, double acc,
            double& best) {
  if (acc >= best) return;
  if (i == cost.size()) {
    best = acc;
    return;
  }
  for (size_t j = 0; j < cost[i].size(); ++j) {
    if (used[j]) continue;
    used[j] = true;
    Search(cost, i + 1, used, acc + cost[i][j], best);
    used[j] = false;
  }
}

}  // namespace

double MeanTopicDistance(const std::vector<std::vector<double>>& truth,
                         const std::vector<std::vector<double>>& learned) {
  std::vector<std::vector<double>> cost(truth.size(), std::vector<double>(learned.size()));
  for (size_t i = 0; i < truth.size(); ++i) {
    for (size_t j = 0; j < learned.size(); ++j) cost[i][j] = Tv(truth[i], learned[j]);
  }
  std::vector<bool> used(learned.size(), false);
  double best = std::numeric_limits<double>::infinity();
  Search(cost, 0, used, 0, best);
  return best / static_cast<double>(truth.size());
}

}  // namespace parasol::apps::lda::testing
