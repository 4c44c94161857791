// Labelled documents as features for linear classifiers: a corpus of text files whose folder names
// their class (20 Newsgroups' "group/id" layout, as a folder or a .tar.gz), tokenised as
// `parasol lda` tokenises, turned into tf-idf rows (scikit-learn's TfidfVectorizer defaults:
// raw counts, smoothed idf ln((1 + n) / (1 + df)) + 1, rows scaled to unit length).
#pragma once

#include <string>
#include <vector>

#include "parasol/data/dataset.h"

namespace parasol::apps::mlr {

struct TextFeatures {
  data::Dataset train, test;         // labels: class index (0-based)
  std::vector<std::string> classes;  // class index -> folder name, ascending
  std::vector<std::string> vocab;    // feature id -> word
};

// The training corpus builds the vocabulary (words seen at least min_count times, stop words and
// words under three letters dropped) and the idf; the test corpus (may be "") is read with both
// fixed. ParseError for a file outside any class folder, or a test class the training set lacks.
TextFeatures ReadTextFeatures(const std::string& train_path, const std::string& test_path,
                              uint32_t min_count);

}  // namespace parasol::apps::mlr
