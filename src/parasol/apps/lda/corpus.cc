#include "parasol/apps/lda/corpus.h"

#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "parasol/core/archive_reader.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::lda {

namespace fs = std::filesystem;

void Corpus::AddDocument(std::string name, std::span<const uint32_t> tokens) {
  doc_names.push_back(std::move(name));
  words.insert(words.end(), tokens.begin(), tokens.end());
  doc_offsets.push_back(words.size());
}

std::vector<uint64_t> Corpus::WordCounts() const {
  std::vector<uint64_t> counts(vocab.size(), 0);
  for (uint32_t w : words) ++counts[w];
  return counts;
}

CorpusFormat ParseCorpusFormat(const std::string& name) {
  if (name == "auto") return CorpusFormat::kAuto;
  if (name == "uci") return CorpusFormat::kUci;
  if (name == "ldac") return CorpusFormat::kLdac;
  if (name == "text") return CorpusFormat::kText;
  if (name == "lines") return CorpusFormat::kLines;
  throw InvalidArgumentError(fmt::format("--format '{}': expected uci, ldac, text, lines or auto", name));
}

namespace {

std::vector<std::string> ReadVocab(const std::string& path) {
  LineReader in(path);
  std::vector<std::string> vocab;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    std::string_view word = NextField(line, pos);
    if (word.empty()) in.Fail("empty word");
    if (!NextField(line, pos).empty()) in.Fail("more than one word on the line");
    vocab.emplace_back(word);
  }
  if (vocab.empty()) throw ParseError(path, 0, "empty vocabulary");
  return vocab;
}

// Finds the single file in `dir` named prefix*.txt.
std::string FindOne(const std::string& dir, const std::string& prefix) {
  std::string found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(".txt")) {
      if (!found.empty()) throw InvalidArgumentError(fmt::format("{}: more than one {}*.txt", dir, prefix));
      found = e.path().string();
    }
  }
  if (ec) throw IoError(fmt::format("{}: cannot list: {}", dir, ec.message()));
  if (found.empty()) throw IoError(fmt::format("{}: no {}*.txt", dir, prefix));
  return found;
}

struct UciHeader {
  uint64_t docs = 0, words = 0, nnz = 0;
};

// The three header lines. Nothing is allocated from them until they are checked against the
// file: an entry line takes at least 6 bytes ("1 1 1\n"), and a document without entries is
// still counted, so a header may not claim more documents than the file has bytes.
UciHeader ReadUciHeader(LineReader& in) {
  UciHeader h;
  uint64_t* fields[] = {&h.docs, &h.words, &h.nnz};
  const char* names[] = {"number of documents", "number of words", "number of entries"};
  std::string_view line;
  for (int i = 0; i < 3; ++i) {
    if (!in.Next(&line))
      throw ParseError(in.path(), in.line_number() + 1, fmt::format("missing {}", names[i]));
    size_t pos = 0;
    *fields[i] = in.Number<uint64_t>(NextField(line, pos), names[i]);
    if (!NextField(line, pos).empty()) in.Fail("more than one field in the header");
  }
  const uint64_t size = in.file_size_bytes();
  if (h.docs > size) {
    throw ParseError(in.path(), 1,
                     fmt::format("{} documents, more than a file of {} bytes holds", h.docs, size));
  }
  if (h.nnz > size / 6) {
    throw ParseError(in.path(), 3,
                     fmt::format("{} entries, more than a file of {} bytes holds", h.nnz, size));
  }
  return h;
}

// An LDA-C first line: "N id:count ..." with digits only.
bool LooksLikeLdac(const std::string& path) {
  LineReader in(path);
  std::string_view line;
  if (!in.Next(&line)) return false;
  size_t pos = 0;
  std::string_view first = NextField(line, pos);
  if (first.empty() || first.find_first_not_of("0123456789") != std::string_view::npos) return false;
  for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos)) {
    const size_t colon = f.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == f.size()) return false;
    if (f.find_first_not_of("0123456789:") != std::string_view::npos) return false;
  }
  return true;
}

}  // namespace

Corpus ReadUci(const std::string& dir) {
  const std::string docword = FindOne(dir, "docword.");
  Corpus c;
  c.vocab = ReadVocab(FindOne(dir, "vocab."));
  LineReader in(docword);
  UciHeader h = ReadUciHeader(in);
  if (h.words != c.vocab.size()) {
    throw ParseError(docword, 2, fmt::format("{} words, but the vocabulary has {}", h.words, c.vocab.size()));
  }
  std::vector<uint32_t> doc;
  uint64_t current = 1, entries = 0;
  auto flush_until = [&](uint64_t d) {
    for (; current < d; ++current) {
      c.AddDocument(std::to_string(current), doc);
      doc.clear();
    }
  };
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    std::string_view first = NextField(line, pos);
    if (first.empty()) continue;
    auto d = in.Number<uint64_t>(first, "document id");
    auto w = in.Number<uint64_t>(NextField(line, pos), "word id");
    auto n = in.Number<uint32_t>(NextField(line, pos), "count");
    if (!NextField(line, pos).empty()) in.Fail("more than 3 fields");
    if (d < current || d > h.docs) in.Fail(fmt::format("document id {} out of order or above {}", d, h.docs));
    if (w == 0 || w > h.words) in.Fail(fmt::format("word id {} not in 1..{}", w, h.words));
    if (n == 0 || n > (1u << 24)) in.Fail(fmt::format("count {} not in 1..2^24", n));
    if (c.words.size() + doc.size() + n > kMaxTokens) {
      in.Fail(fmt::format("more than {} tokens (the most a corpus may have)", kMaxTokens));
    }
    flush_until(d);
    doc.insert(doc.end(), n, static_cast<uint32_t>(w - 1));
    ++entries;
  }
  const long lineno = in.line_number();
  if (entries != h.nnz)
    throw ParseError(docword, lineno, fmt::format("{} entries, the header says {}", entries, h.nnz));
  flush_until(h.docs + 1);
  return c;
}

Corpus ReadLdac(const std::string& data_path, const std::string& vocab_path) {
  Corpus c;
  c.vocab = ReadVocab(vocab_path);
  LineReader in(data_path);
  std::string_view line;
  std::vector<uint32_t> doc;
  while (in.Next(&line)) {
    size_t pos = 0;
    std::string_view first = NextField(line, pos);
    if (first.empty()) in.Fail("empty line (a document needs its number of terms)");
    auto terms = in.Number<uint64_t>(first, "number of terms");
    doc.clear();
    uint64_t seen = 0;
    for (std::string_view f = NextField(line, pos); !f.empty(); f = NextField(line, pos), ++seen) {
      size_t colon = f.find(':');
      if (colon == std::string_view::npos) in.Fail(fmt::format("'{}' is not id:count", f));
      auto w = in.Number<uint64_t>(f.substr(0, colon), "word id");
      auto n = in.Number<uint32_t>(f.substr(colon + 1), "count");
      if (w >= c.vocab.size())
        in.Fail(fmt::format("word id {} not in the vocabulary of {} words", w, c.vocab.size()));
      if (n == 0 || n > (1u << 24)) in.Fail(fmt::format("count {} not in 1..2^24", n));
      if (c.words.size() + doc.size() + n > kMaxTokens) {
        in.Fail(fmt::format("more than {} tokens (the most a corpus may have)", kMaxTokens));
      }
      doc.insert(doc.end(), n, static_cast<uint32_t>(w));
    }
    if (seen != terms) in.Fail(fmt::format("{} terms, the line says {}", seen, terms));
    c.AddDocument(std::to_string(c.num_docs() + 1), doc);
  }
  if (c.num_docs() == 0) throw ParseError(data_path, 0, "no documents");
  return c;
}

Corpus ReadCorpus(const std::string& path, CorpusFormat format, const TextOptions& text,
                  const std::string& vocab_path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw IoError(fmt::format("{}: no such file or folder", path));
  bool dir = fs::is_directory(path, ec);
  if (format == CorpusFormat::kAuto) {
    bool uci = false;
    if (dir) {
      for (const auto& e : fs::directory_iterator(path, ec)) {
        std::string name = e.path().filename().string();
        uci = uci || (name.starts_with("docword.") && name.ends_with(".txt"));
      }
    }
    if (uci) {
      format = CorpusFormat::kUci;
    } else if (dir || IsArchivePath(path)) {
      format = CorpusFormat::kText;
    } else {
      format = LooksLikeLdac(path) ? CorpusFormat::kLdac : CorpusFormat::kLines;
    }
  }
  switch (format) {
    case CorpusFormat::kUci: return ReadUci(path);
    case CorpusFormat::kText: return ReadText(path, text);
    case CorpusFormat::kLines: return ReadLines(path, text);
    default: {
      std::string vocab =
          vocab_path.empty() ? (fs::path(path).parent_path() / "vocab.txt").string() : vocab_path;
      return ReadLdac(path, vocab);
    }
  }
}

Corpus MapToVocabulary(const Corpus& corpus, const std::unordered_map<std::string, uint32_t>& vocab,
                       size_t vocab_size) {
  std::vector<uint32_t> map(corpus.vocab.size(), std::numeric_limits<uint32_t>::max());
  for (size_t w = 0; w < corpus.vocab.size(); ++w) {
    if (auto it = vocab.find(corpus.vocab[w]); it != vocab.end()) map[w] = it->second;
  }
  Corpus out;
  out.vocab.resize(vocab_size);
  for (const auto& [word, id] : vocab) out.vocab[id] = word;
  std::vector<uint32_t> doc;
  for (size_t d = 0; d < corpus.num_docs(); ++d) {
    doc.clear();
    for (uint32_t w : corpus.doc(d)) {
      if (map[w] != std::numeric_limits<uint32_t>::max()) doc.push_back(map[w]);
    }
    out.AddDocument(corpus.doc_names[d], doc);
  }
  return out;
}

}  // namespace parasol::apps::lda
