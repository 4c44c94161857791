// A bag-of-words corpus in memory and its readers: UCI bag-of-words, LDA-C, raw text (a folder or
// a .tar.gz of files, tokenised here) and one document per line (tokenised the same way).
//
// Every reader reports a malformed file as ParseError "file:line: what is wrong" and a missing
// one as IoError; nothing is returned half-read.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace parasol::apps::lda {

// The most tokens a corpus may hold: the token layout indexes tokens in 32 bits.
inline constexpr uint64_t kMaxTokens = (uint64_t{1} << 32) - 1;

struct Corpus {
  std::vector<std::string> vocab;        // word id -> word
  std::vector<std::string> doc_names;    // doc index -> name (a file's path, or its number)
  std::vector<uint64_t> doc_offsets{0};  // doc d's tokens are words[doc_offsets[d] .. doc_offsets[d+1])
  std::vector<uint32_t> words;           // the word id of every token, document by document

  size_t num_docs() const { return doc_offsets.size() - 1; }
  uint64_t num_tokens() const { return words.size(); }
  std::span<const uint32_t> doc(size_t d) const {
    return {words.data() + doc_offsets[d], words.data() + doc_offsets[d + 1]};
  }
  void AddDocument(std::string name, std::span<const uint32_t> tokens);
  // Tokens per word over the whole corpus.
  std::vector<uint64_t> WordCounts() const;
};

enum class CorpusFormat { kAuto, kUci, kLdac, kText, kLines };
// "auto", "uci", "ldac", "text", "lines"; InvalidArgumentError otherwise.
CorpusFormat ParseCorpusFormat(const std::string& name);

struct TextOptions {
  uint32_t min_count = 5;    // words seen fewer times in the corpus are dropped
  uint32_t min_length = 3;   // shorter words are dropped
  bool drop_headers = true;  // skip an e-mail header block ("From: ...", up to the first empty line)
  // Reading documents for a trained model: keep only these words, with these ids (min_count
  // then does not apply). Empty: build the vocabulary from the corpus.
  const std::unordered_map<std::string, uint32_t>* fixed_vocab = nullptr;
  // Dropped as well as the built-in stop words (ReadStopWords).
  const std::unordered_set<std::string>* extra_stop_words = nullptr;
};

// A stop-word file: one word per line (lowercase ASCII letters), '#' starts a comment. Throws
// ParseError "file:line: ..." and IoError.
std::unordered_set<std::string> ReadStopWords(const std::string& path);

// UCI: `dir` holds docword.X.txt and vocab.X.txt (one X). Ids in the file start at 1.
Corpus ReadUci(const std::string& dir);
// LDA-C: lines "N id:count ..." (ids from 0) and a vocabulary file, one word per line.
Corpus ReadLdac(const std::string& data_path, const std::string& vocab_path);
// Raw text: every regular file under `path` (a folder, or a .tar.gz archive) is a document.
Corpus ReadText(const std::string& path, const TextOptions& options);
// One document per line: "NAME<TAB>text", or text alone (the name is then the line number).
// E-mail headers are not looked for. Empty lines are documents without words.
Corpus ReadLines(const std::string& path, const TextOptions& options);
// Writes `corpus` one document per line, "NAME<TAB>word word ..." (ReadLines reads it back as the
// same corpus when every word occurs at least min_count times); whitespace in names becomes '_'.
// Atomically. Throws IoError.
void WriteLines(const std::string& path, const Corpus& corpus);

// Picks the reader: kAuto chooses UCI for a folder with docword.*.txt, text for another folder
// or a .tar.gz, LDA-C for a file whose first line is "N id:count ...", lines for another file (an
// LDA-C file's vocabulary: `vocab_path`, else vocab.txt beside it).
Corpus ReadCorpus(const std::string& path, CorpusFormat format, const TextOptions& text,
                  const std::string& vocab_path = "");

// Re-maps a corpus read with its own vocabulary onto `vocab` (a trained model's): tokens of other
// words are dropped. For folding in documents given as UCI or LDA-C.
Corpus MapToVocabulary(const Corpus& corpus, const std::unordered_map<std::string, uint32_t>& vocab,
                       size_t vocab_size);

}  // namespace parasol::apps::lda
