#include "parasol/dl/text_tokens.h"

#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/text_fields.h"

namespace parasol::dl {
namespace {

constexpr const char* kEol = "<eol>";
constexpr const char* kUnknown = "<unk>";

// Appends the tokens of one line (and its end) as strings.
void Tokenize(std::string_view line, TextLevel level, std::vector<std::string>& out) {
  if (level == TextLevel::kChar) {
    for (char c : line) out.emplace_back(1, c);
    out.emplace_back("\n");
    return;
  }
  for (std::string& w : SplitWords(line)) out.push_back(std::move(w));
  out.emplace_back(kEol);
}

}  // namespace

TextLevel ParseTextLevel(const std::string& s) {
  if (s == "char") return TextLevel::kChar;
  if (s == "word") return TextLevel::kWord;
  throw InvalidArgumentError(fmt::format("unknown text level '{}' (char or word)", s));
}

TextTokens ReadTextTokens(const std::string& path, TextLevel level, double validation_fraction, int64_t seq) {
  std::vector<std::string> lines;
  LineReader reader(path);
  std::string_view line;
  while (reader.Next(&line)) lines.emplace_back(line);
  if (lines.empty()) throw ParseError(path, 0, "no text");
  const auto first_validation =
      static_cast<size_t>(static_cast<double>(lines.size()) * (1 - validation_fraction));
  std::vector<std::string> train_words, validation_words;
  for (size_t i = 0; i < lines.size(); ++i)
    Tokenize(lines[i], level, i < first_validation ? train_words : validation_words);
  TextTokens t;
  std::map<std::string, int64_t> ids;
  for (const std::string& w : train_words) ids.emplace(w, 0);
  if (level == TextLevel::kWord) ids.emplace(kUnknown, 0);
  for (auto& [word, id] : ids) {
    id = static_cast<int64_t>(t.vocab.size());
    t.vocab.push_back(word);
  }
  t.train.reserve(train_words.size());
  for (const std::string& w : train_words) t.train.push_back(ids.at(w));
  const auto unknown = ids.find(kUnknown);
  for (const std::string& w : validation_words) {
    auto it = ids.find(w);
    if (it == ids.end()) it = unknown;
    if (it == ids.end()) continue;  // a character never seen in training: nothing to predict it as
    t.validation.push_back(it->second);
  }
  const auto need = static_cast<size_t>(seq + 1);
  if (t.train.size() < need || t.validation.size() < need) {
    throw ParseError(
        path, 0,
        fmt::format("{} training and {} validation tokens: each needs at least {} (--seq {} + 1)",
                    t.train.size(), t.validation.size(), need, seq));
  }
  return t;
}

}  // namespace parasol::dl
