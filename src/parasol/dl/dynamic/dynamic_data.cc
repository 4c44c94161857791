#include "parasol/dl/dynamic/dynamic_data.h"

#include <filesystem>
#include <random>
#include <unordered_map>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/text_fields.h"
#include "parasol/dl/dynamic/sst_treebank.h"
#include "parasol/dl/text_tokens.h"

namespace parasol::dl::dynamic {
namespace {

std::vector<std::string> WordsOf(const std::unordered_map<std::string, int32_t>& vocab) {
  std::vector<std::string> words(vocab.size());
  for (const auto& [w, id] : vocab) words[static_cast<size_t>(id)] = w;
  return words;
}

// Chains of a token stream cut after each end of line.
std::vector<ExampleGraph> Chains(const std::vector<int64_t>& tokens, int64_t eol) {
  std::vector<ExampleGraph> out;
  ExampleGraph g{.arity = 1};
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (g.size() == 0 && tokens[i] == eol) continue;  // an empty line
    const auto v = static_cast<int32_t>(g.size());
    g.children.push_back(v - 1);  // -1 for the first
    g.input.push_back(static_cast<int32_t>(tokens[i]));
    g.label.push_back(static_cast<int32_t>(tokens[i + 1]));
    if (tokens[i + 1] == eol) {  // the line's last word predicts its end
      g.root = static_cast<int32_t>(g.size()) - 1;
      out.push_back(std::move(g));
      g = ExampleGraph{.arity = 1};
      ++i;  // the end of line itself starts nothing
    }
  }
  return out;
}

}  // namespace

DynamicData LoadSst(const std::string& dir) {
  namespace fs = std::filesystem;
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}};
  DynamicData d;
  d.train = ReadTreebank((fs::path(dir) / "train.txt").string(), vocab, true).trees;
  for (const char* name : {"dev.txt", "test.txt"}) {
    const fs::path p = fs::path(dir) / name;
    if (!fs::exists(p)) continue;
    (std::string(name) == "dev.txt" ? d.dev : d.test) = ReadTreebank(p.string(), vocab, false).trees;
  }
  d.vocab = static_cast<int64_t>(vocab.size());
  d.classes = 5;
  d.words = WordsOf(vocab);
  return d;
}

DynamicData LoadTextChains(const std::string& path) {
  const TextTokens t = ReadTextTokens(path, TextLevel::kWord, 0.1, 1);
  int64_t eol = 0;
  while (t.vocab[static_cast<size_t>(eol)] != "<eol>") ++eol;
  DynamicData d{.train = Chains(t.train, eol), .dev = Chains(t.validation, eol)};
  d.vocab = d.classes = static_cast<int64_t>(t.vocab.size());
  d.words = t.vocab;
  if (d.train.empty()) throw ParseError(path, 0, "no line of two words or more to train on");
  return d;
}

DynamicData MakeSyntheticTrees(int64_t count, int depth, uint64_t seed) {
  if (count < 1 || depth < 1 || depth > 20)
    throw InvalidArgumentError("synthetic trees: count >= 1, depth 1-20");
  std::mt19937_64 rng(seed);
  DynamicData d{.vocab = 1000, .classes = 2};
  const int32_t leaves = 1 << (depth - 1);
  for (int64_t t = 0; t < count; ++t) {
    ExampleGraph g{.arity = 2};
    for (int32_t v = 0; v < leaves; ++v) {  // leaves first, then each level above
      g.children.insert(g.children.end(), {-1, -1});
      g.input.push_back(static_cast<int32_t>(rng() % 1000));
      g.label.push_back(-1);
    }
    for (int32_t first = 0, width = leaves; width > 1; first += width, width /= 2) {
      for (int32_t k = 0; k < width / 2; ++k) {
        g.children.insert(g.children.end(), {first + 2 * k, first + 2 * k + 1});
        g.input.push_back(-1);
        g.label.push_back(-1);
      }
    }
    g.label.back() = static_cast<int32_t>(rng() % 2);
    g.root = static_cast<int32_t>(g.size()) - 1;
    d.train.push_back(std::move(g));
  }
  return d;
}

std::pair<std::vector<float>, int64_t> ReadWordVectors(const std::string& path,
                                                       const std::vector<std::string>& words, int64_t dim) {
  std::unordered_map<std::string_view, size_t> index;
  for (size_t i = 0; i < words.size(); ++i) index.emplace(words[i], i);
  std::vector<float> rows(words.size() * static_cast<size_t>(dim), 0.0f);
  int64_t found = 0;
  LineReader reader(path, {.skip_blank = true});
  std::string_view line;
  while (reader.Next(&line)) {
    size_t pos = 0;
    const std::string_view word = NextField(line, pos);
    const auto it = index.find(word);
    std::vector<float> values;
    for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) {
      if (static_cast<int64_t>(values.size()) == dim)
        reader.Fail(fmt::format("more than {} values (--embedding)", dim));
      values.push_back(reader.Number<float>(f, "a vector's value"));
    }
    if (static_cast<int64_t>(values.size()) != dim) {
      reader.Fail(fmt::format("{} values where --embedding is {}", values.size(), dim));
    }
    if (it == index.end()) continue;
    std::copy(values.begin(), values.end(), rows.begin() + static_cast<std::ptrdiff_t>(it->second * dim));
    ++found;
  }
  return {rows, found};
}

}  // namespace parasol::dl::dynamic
