#include "parasol/dl/dynamic/sst_treebank.h"

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"

namespace parasol::dl::dynamic {
namespace {

// A node being read: its label, its word (a leaf) or its children's vertices.
struct Open {
  int label = -1;
  std::string word;
  std::vector<int32_t> children;
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// One line's tree, read with an explicit stack (no recursion: a line may nest deeply).
ExampleGraph ParseTree(std::string_view line, const LineReader& reader,
                       std::unordered_map<std::string, int32_t>& vocab, bool grow, std::string* sentence) {
  ExampleGraph g;
  std::vector<Open> stack;
  size_t i = 0;
  auto word_id = [&](const std::string& w) {
    auto it = vocab.find(w);
    if (it != vocab.end()) return it->second;
    if (grow) return vocab.emplace(w, static_cast<int32_t>(vocab.size())).first->second;
    return vocab.at("<unk>");
  };
  while (i < line.size()) {
    const char c = line[i];
    if (IsSpace(c)) {
      ++i;
    } else if (c == '(') {
      if (!stack.empty() && !stack.back().word.empty()) reader.Fail("a node has both a word and children");
      ++i;
      size_t j = i;
      while (j < line.size() && line[j] >= '0' && line[j] <= '9') ++j;
      if (j == i || j - i > 1 || line[i] > '4')
        reader.Fail(fmt::format("a node's label must be 0-4, at column {}", i + 1));
      stack.push_back({.label = line[i] - '0'});
      i = j;
    } else if (c == ')') {
      if (stack.empty()) reader.Fail(fmt::format("a ')' closes nothing, at column {}", i + 1));
      Open node = std::move(stack.back());
      stack.pop_back();
      if (node.word.empty() && node.children.empty()) reader.Fail("a node has neither a word nor children");
      const auto v = static_cast<int32_t>(g.input.size());
      g.input.push_back(node.word.empty() ? -1 : word_id(node.word));
      g.label.push_back(node.label);
      g.children.push_back(node.children.size() > 0 ? node.children[0] : -1);
      g.children.push_back(node.children.size() > 1 ? node.children[1] : -1);
      if (!node.word.empty()) *sentence += (sentence->empty() ? "" : " ") + node.word;
      if (stack.empty()) {
        g.root = v;
        ++i;
        break;
      }
      if (stack.back().children.size() == 2) reader.Fail("a node has more than two children");
      stack.back().children.push_back(v);
      ++i;
    } else {
      if (stack.empty() || !stack.back().children.empty() || !stack.back().word.empty())
        reader.Fail(fmt::format("a word outside a leaf, at column {}", i + 1));
      size_t j = i;
      while (j < line.size() && !IsSpace(line[j]) && line[j] != '(' && line[j] != ')') ++j;
      stack.back().word = std::string(line.substr(i, j - i));
      i = j;
    }
  }
  if (!stack.empty()) reader.Fail("unbalanced brackets: the tree is not closed");
  while (i < line.size() && IsSpace(line[i])) ++i;
  if (i < line.size()) reader.Fail(fmt::format("text after the tree, at column {}", i + 1));
  return g;
}

}  // namespace

Treebank ReadTreebank(const std::string& path, std::unordered_map<std::string, int32_t>& vocab, bool grow) {
  if (!grow && vocab.find("<unk>") == vocab.end())
    throw InternalError("ReadTreebank: the vocabulary has no <unk>");
  Treebank t;
  LineReader reader(path, {.skip_blank = true});
  std::string_view line;
  while (reader.Next(&line)) {
    std::string sentence;
    t.trees.push_back(ParseTree(line, reader, vocab, grow, &sentence));
    t.sentences.push_back(std::move(sentence));
  }
  if (t.trees.empty()) throw ParseError(path, 0, "no tree");
  return t;
}

int BinaryLabel(int fine) { return fine < 2 ? 0 : fine > 2 ? 1 : -1; }

}  // namespace parasol::dl::dynamic
