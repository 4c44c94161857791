// Hyperparameter optimisation for LDA: Minka's fixed point for the parameters of a Dirichlet from
// the multinomial counts drawn from it ("Estimating a Dirichlet distribution", 2000, eq. 55),
// in the histogram form of Wallach's thesis that Mallet's --optimize-interval uses.
//
// An asymmetric alpha over topics, from the documents' topic counts n_dk:
//   alpha_k <- alpha_k * sum_d [psi(n_dk + alpha_k) - psi(alpha_k)]
//                      / sum_d [psi(n_d + alpha_0) - psi(alpha_0)],   alpha_0 = sum_k alpha_k;
// a symmetric beta over the V words, from the word-topic counts n_wk and the topic totals n_k:
//   beta <- beta * sum_{w,k} [psi(n_wk + beta) - psi(beta)] / (V sum_k [psi(n_k + V beta) - psi(V beta)]).
// psi(n + a) - psi(a) is 0 for n = 0, so only nonzero counts enter, as histograms: how many
// documents (or word-topic pairs) have each count.
//
// Several processes: each holds the histograms of its own documents (or word blocks), and every
// sum above is a sum of the processes' parts; `sum_across` adds a vector of parts over the
// processes in place (collective; nothing in one process). Every process then takes the same
// steps and ends with the same parameters.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace parasol::apps::lda {

// (count, how many units have it), count >= 1, each count once.
using CountHistogram = std::vector<std::pair<uint32_t, uint64_t>>;
using SumAcross = std::function<void(std::span<double>)>;

// Counts tallied one at a time, then listed as a CountHistogram.
class CountTally {
 public:
  void Add(uint32_t count) {
    if (count >= units_.size()) units_.resize(count + 1, 0);
    ++units_[count];
  }
  CountHistogram Histogram() const;

 private:
  std::vector<uint64_t> units_;
};

// psi(a + n) - psi(a) for a > 0.
double DigammaDifference(double a, uint64_t n);
double Digamma(double x);

struct FitOptions {
  uint32_t max_iterations = 200;
  double tolerance = 1e-6;  // stop when no parameter moves by more than this, relatively
  double floor = 1e-6;      // a parameter with no counts would go to 0, where psi is undefined
};

// `topic_counts[k]`: the histogram of n_dk over the documents; `lengths`: of n_d. Returns the new
// alpha (starting from `alpha`, one value per topic).
std::vector<double> FitAsymmetricAlpha(std::span<const CountHistogram> topic_counts,
                                       const CountHistogram& lengths, std::vector<double> alpha,
                                       const SumAcross& sum_across, const FitOptions& options = {});
// `word_counts`: the histogram of n_wk over the word-topic pairs; `totals`: n_k (the whole
// corpus's, the same in every process); `vocab`: V. Returns the new beta.
double FitSymmetricBeta(const CountHistogram& word_counts, std::span<const int64_t> totals, uint32_t vocab,
                        double beta, const SumAcross& sum_across, const FitOptions& options = {});

}  // namespace parasol::apps::lda
