// The example graphs of the dynamic networks' data sets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parasol/dl/dynamic/example_graph.h"

namespace parasol::dl::dynamic {

struct DynamicData {
  std::vector<ExampleGraph> train, dev, test;  // dev, test: may be empty
  int64_t vocab = 0;
  int64_t classes = 0;
  std::vector<std::string> words;  // id -> word
};

// SST (DIR/train.txt, dev.txt, test.txt): the vocabulary from train (with "<unk>" for the others'
// new words), 5 classes, every node labelled.
DynamicData LoadSst(const std::string& dir);
// A text file's lines as chains of words (dl/text_tokens' word level: the last 10% of the lines for
// validation, in `dev`): each position reads its word and predicts the next ("<eol>" ends a line).
DynamicData LoadTextChains(const std::string& path);
// `count` complete binary trees of `depth` levels (2^depth - 1 vertices), leaves reading random
// tokens of a 1,000-word vocabulary, the root labelled with one of 2 classes: Cavs's Tree-FC input.
DynamicData MakeSyntheticTrees(int64_t count, int depth, uint64_t seed);

// Word vectors as GloVe writes them ("word v1 ... vD" per line) for the words of `words`: rows of
// a [words, dim] matrix, and how many were found. ParseError "path:line: ..." for a line of another
// dimension or a value that is not a number.
std::pair<std::vector<float>, int64_t> ReadWordVectors(const std::string& path,
                                                       const std::vector<std::string>& words, int64_t dim);

}  // namespace parasol::dl::dynamic
