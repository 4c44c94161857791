// The Stanford Sentiment Treebank as PTB brackets, one binarised tree per line, every node with
// its sentiment 0-4: "(3 (2 The) (4 (3 good) (2 film)))". Each tree becomes an ExampleGraph of
// arity 2: leaves read their word, every vertex is labelled, the root last.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "parasol/dl/dynamic/example_graph.h"

namespace parasol::dl::dynamic {

struct Treebank {
  std::vector<ExampleGraph> trees;
  std::vector<std::string> sentences;  // the leaves' words, for messages
};

// Words are looked up in `vocab`; with `grow` new words are added, without they become the
// unknown word's id (`vocab` must then hold "<unk>"). ParseError "path:line: what is wrong" for
// unbalanced brackets, a label outside 0-4, a node with more than two children, an empty file.
Treebank ReadTreebank(const std::string& path, std::unordered_map<std::string, int32_t>& vocab, bool grow);

// Binary sentiment of a fine-grained label: 0 (negative: 0, 1), 1 (positive: 3, 4), -1 (neutral).
int BinaryLabel(int fine);

}  // namespace parasol::dl::dynamic
