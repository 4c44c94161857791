// A trained model on disk (docs/lda-model.md) and the human-readable outputs:
//   DIR/model.txt      "parasol-lda-model 1 K V alpha beta", then "word k:count ..." per word;
//                      version 2 (an optimised, asymmetric alpha): then "alpha a_0 ... a_K-1" first
//   DIR/vocab.txt      one word per line (line i = word id i)
//   DIR/topics.txt     each topic's tokens, coherence (coherence.h) and top words
//   DIR/doc_topics.txt "name k:proportion ..." per document, largest first (topics without
//                      tokens in the document have alpha_k / (N_d + sum alpha))
//   DIR/*.npy          on request, the distributions as NumPy arrays (WriteTopicWordNpy)
// Files are written to a temporary name and renamed, so a failed run leaves no half file.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "parasol/apps/lda/coherence.h"
#include "parasol/apps/lda/lda_params.h"
#include "parasol/apps/lda/word_topic.h"

namespace parasol::apps::lda {

struct LdaModel {
  uint32_t topics = 0;
  double alpha = 0, beta = 0;
  std::vector<std::string> vocab;
  WordTopicTable table;
  std::vector<int64_t> totals;
  std::vector<double> topic_alpha;  // asymmetric alpha (LdaParams::topic_alpha); empty: alpha

  // The hyperparameters as the samplers take them.
  LdaParams Params(uint32_t mh_steps = 2) const;
  std::unordered_map<std::string, uint32_t> VocabIndex() const;
  // For each topic, its `n` words with the largest counts, largest first (ties: lower id).
  std::vector<std::vector<uint32_t>> TopWords(size_t n) const;
};

using DocTopics = std::vector<std::pair<uint32_t, uint32_t>>;  // (topic, tokens), nonzero only

// Throws IoError.
void SaveModel(const std::string& dir, const LdaModel& model);
// NumPy arrays (with vocab.txt, the five inputs of pyLDAvis's prepare): DIR/topic_word.npy, K x V
// float32, phi_k(w) = (n_wk + beta) / (n_k + V beta); DIR/term_frequency.npy, V int64, each word's
// tokens in the corpus. Throws IoError.
void WriteTopicWordNpy(const std::string& dir, const LdaModel& model,
                       std::span<const uint64_t> term_frequency);
// DIR/doc_topic{suffix}.npy, D x K float32, theta_d(k) = (n_dk + alpha_k) / (N_d + sum alpha), and
// DIR/doc_lengths{suffix}.npy, D int64, N_d, for these documents. `alpha`: K values (Alphas()).
// Throws IoError.
void WriteDocTopicNpy(const std::string& dir, const std::string& suffix, const std::vector<DocTopics>& docs,
                      const std::vector<double>& alpha);
// Throws IoError, or ParseError "file:line: what is wrong".
LdaModel LoadModel(const std::string& dir);
void WriteTopics(const std::string& path, const LdaModel& model, size_t words_per_topic,
                 const Coherence* coherence = nullptr);
// `alpha`: K values (Alphas()).
void WriteDocTopics(std::ostream& out, const std::vector<std::string>& names,
                    const std::vector<DocTopics>& docs, const std::vector<double>& alpha);
void WriteDocTopics(const std::string& path, const std::vector<std::string>& names,
                    const std::vector<DocTopics>& docs, const std::vector<double>& alpha);
// "topic 3 (1234 tokens): w1 w2 ..." lines, one per topic; at most `max_topics` (the largest by
// tokens). With `coherence`: "topic 3 (1234 tokens, umass -41.2, npmi 0.071): w1 w2 ..."; with a
// fitted alpha, the topic's alpha after its tokens.
std::string FormatTopics(const LdaModel& model, size_t words_per_topic, size_t max_topics,
                         const Coherence* coherence = nullptr);

}  // namespace parasol::apps::lda
