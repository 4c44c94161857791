#include "parasol/apps/lda/dirichlet_fit.h"

#include <algorithm>
#include <cmath>

namespace parasol::apps::lda {

CountHistogram CountTally::Histogram() const {
  CountHistogram h;
  for (uint32_t c = 1; c < units_.size(); ++c) {
    if (units_[c] != 0) h.emplace_back(c, units_[c]);
  }
  return h;
}

double Digamma(double x) {
  // psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series (error below 1e-14 there).
  double shift = 0;
  for (; x < 10; x += 1) shift -= 1 / x;
  const double r = 1 / x, r2 = r * r;
  const double series =
      r2 * (1.0 / 12 - r2 * (1.0 / 120 - r2 * (1.0 / 252 - r2 * (1.0 / 240 - r2 * (1.0 / 132)))));
  return shift + std::log(x) - 0.5 * r - series;
}

double DigammaDifference(double a, uint64_t n) {
  // Small n: the sum sum_{i<n} 1/(a + i) exactly; psi's difference would lose digits to
  // cancellation when a is tiny (psi(a) ~ -1/a).
  if (n <= 16) {
    double s = 0;
    for (uint64_t i = 0; i < n; ++i) s += 1 / (a + static_cast<double>(i));
    return s;
  }
  return Digamma(a + static_cast<double>(n)) - Digamma(a);
}

namespace {

double Weighted(const CountHistogram& h, double a) {
  double s = 0;
  for (auto [c, units] : h) s += static_cast<double>(units) * DigammaDifference(a, c);
  return s;
}

}  // namespace

std::vector<double> FitAsymmetricAlpha(std::span<const CountHistogram> topic_counts,
                                       const CountHistogram& lengths, std::vector<double> alpha,
                                       const SumAcross& sum_across, const FitOptions& options) {
  const size_t k = alpha.size();
  std::vector<double> parts(k + 1);
  for (uint32_t it = 0; it < options.max_iterations; ++it) {
    double alpha0 = 0;
    for (double a : alpha) alpha0 += a;
    for (size_t t = 0; t < k; ++t) parts[t] = Weighted(topic_counts[t], alpha[t]);
    parts[k] = Weighted(lengths, alpha0);
    if (sum_across) sum_across(parts);
    if (!(parts[k] > 0)) break;  // no tokens anywhere: nothing to fit
    double moved = 0;
    for (size_t t = 0; t < k; ++t) {
      const double next = std::max(options.floor, alpha[t] * parts[t] / parts[k]);
      moved = std::max(moved, std::abs(next - alpha[t]) / alpha[t]);
      alpha[t] = next;
    }
    if (moved < options.tolerance) break;
  }
  return alpha;
}

double FitSymmetricBeta(const CountHistogram& word_counts, std::span<const int64_t> totals, uint32_t vocab,
                        double beta, const SumAcross& sum_across, const FitOptions& options) {
  const double v = vocab;
  for (uint32_t it = 0; it < options.max_iterations; ++it) {
    double parts[1] = {Weighted(word_counts, beta)};
    if (sum_across) sum_across(parts);
    double den = 0;
    for (int64_t n : totals)
      den += DigammaDifference(v * beta, static_cast<uint64_t>(std::max<int64_t>(0, n)));
    if (!(den > 0)) break;
    const double next = std::max(options.floor, beta * parts[0] / (v * den));
    const double moved = std::abs(next - beta) / beta;
    beta = next;
    if (moved < options.tolerance) break;
  }
  return beta;
}

}  // namespace parasol::apps::lda
