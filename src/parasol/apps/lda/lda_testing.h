// Test support: corpora drawn from the LDA generative model with known topics.
#pragma once

#include <cstdint>
#include <vector>

#include "parasol/apps/lda/corpus.h"

namespace parasol::apps::lda::testing {

struct SyntheticLda {
  Corpus corpus;
  std::vector<std::vector<double>> topics;  // the true word distribution of each topic
};

// `k` topics over `v` words, each putting most of its mass on its own v/k words; documents of
// `doc_length` tokens with proportions from Dirichlet(alpha).
SyntheticLda GenerateLda(uint32_t k, uint32_t v, uint32_t docs, uint32_t doc_length, double alpha,
                         uint64_t seed);
// The same with proportions from Dirichlet(alpha_0, ..., alpha_k-1) (k = alpha.size()), and
// `shared_mass` of each topic spread over every word (0: topics with disjoint words).
SyntheticLda GenerateLda(const std::vector<double>& alpha, uint32_t v, uint32_t docs, uint32_t doc_length,
                         uint64_t seed, double shared_mass = 0.1);

// LDA's own generative model: topics phi_k ~ Dirichlet(beta) over `v` words, proportions
// theta_d ~ Dirichlet(alpha_0, ..., alpha_k-1), documents of `doc_length` tokens.
SyntheticLda DrawLda(const std::vector<double>& alpha, double beta, uint32_t v, uint32_t docs,
                     uint32_t doc_length, uint64_t seed);

// Matches every true topic to a distinct learned one (learned: rows of word probabilities, at
// least as many as the true ones) minimising the summed total-variation distance; returns the
// mean distance of the matched pairs (0: identical, 1: disjoint).
double MeanTopicDistance(const std::vector<std::vector<double>>& truth,
                         const std::vector<std::vector<double>>& learned);

}  // namespace parasol::apps::lda::testing
