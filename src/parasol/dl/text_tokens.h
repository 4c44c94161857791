// A plain-text file as a language model's token stream: characters (bytes, a newline ending each
// line) or words (split at blanks, a "<eol>" token ending each line, as the word-level corpora of
// language modelling write it). The first (1 - validation_fraction) of the lines are for training
// and make the vocabulary (sorted, so it does not depend on the order of the text); validation
// tokens outside it become "<unk>".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parasol::dl {

enum class TextLevel { kChar, kWord };
TextLevel ParseTextLevel(const std::string& s);  // "char" or "word"; InvalidArgumentError otherwise

struct TextTokens {
  std::vector<std::string> vocab;  // id -> token (characters as one-byte strings)
  std::vector<int64_t> train, validation;
};

// Throws IoError (cannot read) and ParseError "path: ..." for a file with no line, or too few
// tokens for one training and one validation sequence of `seq` + 1 tokens.
TextTokens ReadTextTokens(const std::string& path, TextLevel level, double validation_fraction, int64_t seq);

}  // namespace parasol::dl
