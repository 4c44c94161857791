// Raw-text corpora: files in a folder or a .tar.gz archive, or one document per line, tokenised into
// lowercase words.
#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "parasol/apps/lda/corpus.h"
#include "parasol/apps/lda/word_ids.h"
#include "parasol/core/archive_reader.h"
#include "parasol/core/atomic_file.h"
#include "parasol/core/error.h"
#include "parasol/core/line_reader.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::lda {

namespace fs = std::filesystem;

namespace {

// Function words that carry no topic.
const std::unordered_set<std::string_view>& StopWords() {
  static const std::unordered_set<std::string_view> words = {
      "a",       "about",     "above",     "after",    "again",    "against",    "all",        "also",
      "am",      "an",        "and",       "any",      "are",      "as",         "at",         "be",
      "because", "been",      "before",    "being",    "below",    "between",    "both",       "but",
      "by",      "can",       "cannot",    "could",    "did",      "do",         "does",       "doing",
      "don",     "down",      "during",    "each",     "even",     "ever",       "every",      "few",
      "for",     "from",      "further",   "get",      "got",      "had",        "has",        "have",
      "having",  "he",        "her",       "here",     "hers",     "herself",    "him",        "himself",
      "his",     "how",       "however",   "i",        "if",       "in",         "into",       "is",
      "it",      "its",       "itself",    "just",     "like",     "make",       "many",       "may",
      "me",      "might",     "more",      "most",     "much",     "must",       "my",         "myself",
      "never",   "no",        "nor",       "not",      "now",      "of",         "off",        "often",
      "on",      "once",      "one",       "only",     "or",       "other",      "ought",      "our",
      "ours",    "ourselves", "out",       "over",     "own",      "per",        "put",        "rather",
      "re",      "said",      "same",      "say",      "says",     "see",        "seem",       "seems",
      "shall",   "she",       "should",    "since",    "so",       "some",       "still",      "such",
      "than",    "that",      "the",       "their",    "theirs",   "them",       "themselves", "then",
      "there",   "these",     "they",      "this",     "those",    "though",     "through",    "thus",
      "to",      "too",       "two",       "under",    "until",    "up",         "upon",       "us",
      "use",     "used",      "very",      "was",      "way",      "we",         "well",       "were",
      "what",    "when",      "where",     "whether",  "which",    "while",      "who",        "whom",
      "whose",   "why",       "will",      "with",     "within",   "without",    "would",      "yes",
      "yet",     "you",       "your",      "yours",    "yourself", "yourselves", "ve",         "ll",
      "didn",    "doesn",     "isn",       "wasn",     "aren",     "won",        "wouldn",     "shouldn",
      "couldn",  "haven",     "hasn",      "let",      "know",     "think",      "want",       "going",
      "really",  "anyone",    "something", "anything", "nothing",  "someone",    "everyone",   "thing",
      "things",  "lot",       "etc"};
  return words;
}

constexpr size_t kMaxWordLength = 30;  // longer runs of letters are encodings, not words

// Calls fn(word) for each lowercase run of `min_length` to kMaxWordLength ASCII letters in `text`,
// after the e-mail header. A word is a view into `text`, or into `lowered` when it had capitals:
// appended there, its view stays valid while `lowered` is not cleared. Only words fn is called
// with are appended, so a caller that clears `lowered` every n words needs n x kMaxWordLength bytes
// reserved for it never to reallocate (which would leave the views dangling).
template <typename Fn>
void Tokenise(std::string_view text, bool drop_headers, size_t min_length, std::string& lowered, Fn&& fn) {
  size_t start = 0;
  if (drop_headers) {
    // A header block: "Name: value" lines from the first line up to an empty line.
    size_t colon = text.find(':'), eol = text.find('\n');
    bool header = colon != std::string_view::npos && colon < eol && colon > 0 &&
                  text.substr(0, colon).find(' ') == std::string_view::npos;
    if (header) {
      size_t blank = text.find("\n\n");
      start = blank == std::string_view::npos ? text.size() : blank + 2;
    }
  }
  for (size_t i = start; i < text.size();) {
    // A letter: ch | 0x20 is its lowercase ('A' to 'Z' have bit 0x20 clear, 'a' to 'z' set).
    auto letter = [&](size_t at) { return static_cast<unsigned char>((text[at] | 0x20) - 'a') < 26; };
    while (i < text.size() && !letter(i)) ++i;
    const size_t begin = i;
    bool upper = false;
    for (; i < text.size() && letter(i); ++i) upper |= text[i] < 'a';
    const size_t len = i - begin;
    if (len == 0 || len < min_length || len > kMaxWordLength) continue;
    if (!upper) {
      fn(text.substr(begin, len));
      continue;
    }
    const size_t at = lowered.size();
    assert(at + len <= lowered.capacity());
    for (size_t k = 0; k < len; ++k) lowered.push_back(static_cast<char>(text[begin + k] | 0x20));
    fn(std::string_view(lowered).substr(at, len));
  }
}

// The largest document file read from a folder or an archive: text for a topic model, not data
// of another kind (and no archive header can make a reader allocate more).
constexpr uint64_t kMaxDocumentBytes = uint64_t{256} << 20;

std::string ReadWhole(const std::string& path) {
  std::error_code ec;
  if (const uint64_t size = fs::file_size(path, ec); !ec && size > kMaxDocumentBytes) {
    throw ParseError(
        path, 0, fmt::format("{} bytes: larger than a document may be ({} bytes)", size, kMaxDocumentBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot open", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Collects tokenised documents, then keeps the words seen often enough and numbers them. Every
// document's tokens sit in one array; a word is looked up once a token, and the first time it is
// seen it gets an id here, or kDropped (a stop word, or a word outside a fixed vocabulary). Words
// are looked up in batches, their slots in the table prefetched as they are read.
class TextBuilder {
 public:
  explicit TextBuilder(const TextOptions& options) : o_(options) {
    batch_.reserve(kBatch);
    lowered_.reserve(kBatch * kMaxWordLength);
  }

  void Add(std::string name, std::string_view text, bool drop_headers) {
    Tokenise(text, drop_headers, o_.min_length, lowered_, [&](std::string_view w) {
      const uint64_t hash = WordIds::Hash(w);
      ids_.Prefetch(hash);
      batch_.push_back({w, hash});
      if (batch_.size() == kBatch) LookUp();
    });
    LookUp();
    names_.push_back(std::move(name));
    offsets_.push_back(tokens_.size());
  }

  Corpus Finish(const std::string& path) {
    if (names_.empty()) throw ParseError(path, 0, "no documents");
    Corpus c;
    if (o_.fixed_vocab) {
      c.vocab.resize(o_.fixed_vocab->size());
      for (const auto& [w, id] : *o_.fixed_vocab) c.vocab[id] = w;
    } else {
      // Kept words, the most frequent first (ties in alphabetical order): ids are stable for a corpus.
      std::vector<uint32_t> kept;
      for (uint32_t i = 0; i < words_.size(); ++i) {
        if (counts_[i] >= o_.min_count) kept.push_back(i);
      }
      std::sort(kept.begin(), kept.end(), [&](uint32_t a, uint32_t b) {
        return counts_[a] != counts_[b] ? counts_[a] > counts_[b] : words_[a] < words_[b];
      });
      std::vector<uint32_t> final_id(words_.size(), kDropped);
      for (uint32_t i = 0; i < kept.size(); ++i) final_id[kept[i]] = i, c.vocab.push_back(words_[kept[i]]);
      if (c.vocab.empty())
        throw ParseError(path, 0, fmt::format("no word occurs {} times or more", o_.min_count));
      // The rare words' tokens leave, in place.
      uint64_t out = 0, begin = 0;
      for (uint64_t& end : offsets_) {
        for (uint64_t i = begin; i < end; ++i) {
          if (final_id[tokens_[i]] != kDropped) tokens_[out++] = final_id[tokens_[i]];
        }
        begin = end;
        end = out;
      }
      tokens_.resize(out);
    }
    c.doc_names = std::move(names_);
    c.doc_offsets = std::move(offsets_);
    c.words = std::move(tokens_);
    c.words.shrink_to_fit();
    return c;
  }

 private:
  static constexpr uint32_t kDropped = UINT32_MAX;
  static constexpr size_t kBatch = 256;
  void LookUp() {
    for (const auto& [w, hash] : batch_) {
      const uint32_t* found = ids_.Find(w, hash);
      const uint32_t id = found ? *found : ids_.Add(w, hash, NewId(w));
      if (id == kDropped) continue;
      if (!o_.fixed_vocab) ++counts_[id];
      tokens_.push_back(id);
    }
    batch_.clear();
    lowered_.clear();
  }

  uint32_t NewId(std::string_view w) {
    if (StopWords().contains(w)) return kDropped;
    const std::string key(w);
    if (o_.extra_stop_words && o_.extra_stop_words->contains(key)) return kDropped;
    if (o_.fixed_vocab) {
      auto it = o_.fixed_vocab->find(key);
      return it == o_.fixed_vocab->end() ? kDropped : it->second;
    }
    words_.push_back(key);
    counts_.push_back(0);
    return static_cast<uint32_t>(words_.size() - 1);
  }

  const TextOptions& o_;
  WordIds ids_;                                               // word -> id here, or kDropped
  std::vector<std::pair<std::string_view, uint64_t>> batch_;  // words read, not looked up yet
  std::string lowered_;                                       // those of them that had capitals
  std::vector<std::string> words_;                            // id here -> word
  std::vector<uint64_t> counts_;
  std::vector<std::string> names_;
  std::vector<uint64_t> offsets_{0};  // as Corpus::doc_offsets
  std::vector<uint32_t> tokens_;      // ids here (a fixed vocabulary's ids when there is one)
};

}  // namespace

Corpus ReadText(const std::string& path, const TextOptions& options) {
  TextBuilder builder(options);
  auto add = [&](const std::string& name, const std::string& text) {
    builder.Add(name, text, options.drop_headers);
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
      if (e.is_regular_file()) files.push_back(e.path().string());
    }
    if (ec) throw IoError(fmt::format("{}: cannot list: {}", path, ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& f : files) add(fs::relative(f, path).string(), ReadWhole(f));
  } else {
    ForEachArchiveFile(path, kMaxDocumentBytes, add);
  }
  return builder.Finish(path);
}

Corpus ReadLines(const std::string& path, const TextOptions& options) {
  LineReader in(path);
  TextBuilder builder(options);
  std::string_view line;
  while (in.Next(&line)) {
    const size_t tab = line.find('\t');
    std::string name =
        tab == std::string_view::npos ? std::to_string(in.line_number()) : std::string(line.substr(0, tab));
    if (tab != std::string_view::npos) line.remove_prefix(tab + 1);
    builder.Add(std::move(name), line, false);
  }
  return builder.Finish(path);
}

void WriteLines(const std::string& path, const Corpus& corpus) {
  WriteFileAtomically(path, [&](std::ostream& out) {
    std::string line;
    for (size_t d = 0; d < corpus.num_docs(); ++d) {
      line = corpus.doc_names[d];
      for (char& ch : line) {
        if (std::isspace(static_cast<unsigned char>(ch))) ch = '_';
      }
      line += '\t';
      bool first = true;
      for (uint32_t w : corpus.doc(d)) {
        if (!first) line += ' ';
        line += corpus.vocab[w];
        first = false;
      }
      line += '\n';
      out << line;
    }
  });
}

std::unordered_set<std::string> ReadStopWords(const std::string& path) {
  LineReader in(path, {.comment = '#', .skip_blank = true, .trailing_comment = true});
  std::unordered_set<std::string> words;
  std::string_view line;
  while (in.Next(&line)) {
    size_t pos = 0;
    const std::string_view word = NextField(line, pos);
    if (!NextField(line, pos).empty()) in.Fail("more than one word on the line");
    std::string lower;
    for (char ch : word) {
      if (!std::isalpha(static_cast<unsigned char>(ch))) {
        in.Fail(fmt::format("'{}' is not a word of letters (the tokeniser keeps letters only)", word));
      }
      lower.push_back(static_cast<char>(ch | 0x20));
    }
    words.insert(std::move(lower));
  }
  return words;
}

}  // namespace parasol::apps::lda
