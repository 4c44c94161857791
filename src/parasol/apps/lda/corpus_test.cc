#include "parasol/apps/lda/corpus.h"

#include <archive.h>
#include <archive_entry.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::lda {
namespace {

namespace fs = std::filesystem;

class CorpusTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  // Expects ParseError with message "path:line: ..." containing `what`.
  template <typename Fn>
  void ExpectParseError(Fn&& fn, const std::string& path, int line, const std::string& what) {
    try {
      fn();
      FAIL() << "no error";
    } catch (const ParseError& e) {
      EXPECT_THAT(e.what(), ::testing::StartsWith(fmt::format("{}:{}: ", path, line)));
      EXPECT_THAT(e.what(), ::testing::HasSubstr(what));
    }
  }
  TestDir dir_{"lda_corpus"};
};

TEST_F(CorpusTest, ReadsLdac) {
  std::string vocab = Write("vocab.txt", "apple\nbanana\ncherry\n");
  std::string data = Write("c.dat", "2 0:2 2:1\n1 1:3\n");
  Corpus c = ReadLdac(data, vocab);
  ASSERT_EQ(c.num_docs(), 2u);
  EXPECT_EQ(c.num_tokens(), 6u);
  EXPECT_THAT(c.doc(0), ::testing::ElementsAre(0, 0, 2));
  EXPECT_THAT(c.doc(1), ::testing::ElementsAre(1, 1, 1));
  EXPECT_THAT(c.WordCounts(), ::testing::ElementsAre(2, 3, 1));
}

TEST_F(CorpusTest, LdacErrorsNameTheLine) {
  std::string vocab = Write("vocab.txt", "a\nb\n");
  std::string bad_id = Write("bad_id.dat", "1 0:1\n1 1:2\n1 7:1\n");
  ExpectParseError([&] { ReadLdac(bad_id, vocab); }, bad_id, 3, "word id 7");
  std::string bad_terms = Write("bad_terms.dat", "1 0:1\n3 0:1 1:1\n");
  ExpectParseError([&] { ReadLdac(bad_terms, vocab); }, bad_terms, 2, "2 terms, the line says 3");
  std::string bad_pair = Write("bad_pair.dat", "1 0-1\n");
  ExpectParseError([&] { ReadLdac(bad_pair, vocab); }, bad_pair, 1, "not id:count");
  std::string bad_count = Write("bad_count.dat", "1 0:1\n1 1:x\n");
  ExpectParseError([&] { ReadLdac(bad_count, vocab); }, bad_count, 2, "count 'x'");
  EXPECT_THROW(ReadLdac((dir_ / "missing.dat").string(), vocab), IoError);
}

TEST_F(CorpusTest, ReadsUciAndRejectsBadEntries) {
  Write("uci/vocab.small.txt", "x\ny\nz\n");
  Write("uci/docword.small.txt", "3\n3\n3\n1 1 2\n1 3 1\n3 2 4\n");
  Corpus c = ReadUci((dir_ / "uci").string());
  ASSERT_EQ(c.num_docs(), 3u);  // document 2 is empty
  EXPECT_THAT(c.doc(0), ::testing::ElementsAre(0, 0, 2));
  EXPECT_TRUE(c.doc(1).empty());
  EXPECT_THAT(c.doc(2), ::testing::ElementsAre(1, 1, 1, 1));
  EXPECT_EQ(c.vocab[2], "z");

  std::string bad = Write("uci2/docword.b.txt", "2\n3\n2\n1 1 1\n2 4 1\n");
  Write("uci2/vocab.b.txt", "x\ny\nz\n");
  ExpectParseError([&] { ReadUci((dir_ / "uci2").string()); }, bad, 5, "word id 4");
  std::string order = Write("uci3/docword.b.txt", "2\n3\n2\n2 1 1\n1 2 1\n");
  Write("uci3/vocab.b.txt", "x\ny\nz\n");
  ExpectParseError([&] { ReadUci((dir_ / "uci3").string()); }, order, 5, "out of order");
  std::string nnz = Write("uci4/docword.b.txt", "1\n3\n2\n1 1 1\n");
  Write("uci4/vocab.b.txt", "x\ny\nz\n");
  ExpectParseError([&] { ReadUci((dir_ / "uci4").string()); }, nnz, 4, "1 entries, the header says 2");
  // Headers are checked against the file before anything is sized by them (empty documents are
  // allowed, so the document count once made the reader allocate until the kernel stopped it).
  std::string docs = Write("uci5/docword.b.txt", "999999999999\n3\n1\n1 1 1\n");
  Write("uci5/vocab.b.txt", "x\ny\nz\n");
  ExpectParseError([&] { ReadUci((dir_ / "uci5").string()); }, docs, 1,
                   "999999999999 documents, more than a file of 23 bytes holds");
  std::string entries = Write("uci6/docword.b.txt", "1\n3\n18446744073709551615\n1 1 1\n");
  Write("uci6/vocab.b.txt", "x\ny\nz\n");
  ExpectParseError([&] { ReadUci((dir_ / "uci6").string()); }, entries, 3, "entries, more than a file of");
  std::string big = Write("uci7/docword.b.txt", "1\n3\n1\n1 1 99999999999999999999\n");
  Write("uci7/vocab.b.txt", "x\ny\nz\n");
  ExpectParseError([&] { ReadUci((dir_ / "uci7").string()); }, big, 4,
                   "count '99999999999999999999' is not a whole number");
}

TEST_F(CorpusTest, TokenisesTextDroppingHeadersStopWordsAndRareWords) {
  Write("text/a/1", "From: someone@example.com\nSubject: hockey\n\nThe goalie saved the puck. Goalie!\n");
  Write("text/a/2", "Puck and goalie, again the goalie.\n");
  Write("text/b/3", "Orbit of the shuttle; shuttle orbit launch 1993 x2y.\n");
  TextOptions o;
  o.min_count = 2;
  Corpus c = ReadText((dir_ / "text").string(), o);
  ASSERT_EQ(c.num_docs(), 3u);
  // goalie 4, puck 2, orbit 2, shuttle 2; "saved", "launch", "again" once; "the", "and", "of" stop
  // words; "from", "someone", "subject", "hockey" only in the header.
  EXPECT_THAT(c.vocab, ::testing::ElementsAre("goalie", "orbit", "puck", "shuttle"));
  EXPECT_EQ(c.doc_names[0], "a/1");
  EXPECT_THAT(c.doc(0), ::testing::ElementsAre(0, 2, 0));
  EXPECT_THAT(c.doc(2), ::testing::ElementsAre(1, 3, 3, 1));
}

// Words are runs of letters, lowercased: capitals anywhere make the same word; two words that
// share their first 20 letters (the word table's inline part) are two words; a run of 30 letters
// is a word and one of 31 is not. A document of 601 words (more than the reader looks up at once)
// keeps every one, capitals included.
TEST_F(CorpusTest, LinesAreWordsOfLettersWhateverTheirCase) {
  const std::string a20 = "abcdefghijklmnopqrst", w30 = a20 + "uvwxyzabcd", w31 = w30 + "e";
  std::string long_doc = "d3\t";
  for (int i = 0; i < 200; ++i) long_doc += "Goalie " + a20 + "ONE " + a20 + "two ";
  long_doc += "GOALIE\n";
  const std::string path = Write("lines.txt", "d1\tGoalie GOALIE goalie gOaLiE " + a20 + "one " + w30 + " " +
                                                  w31 + "\nd2\t" + a20 + "Two 42" + w30 + "\n" + long_doc);
  TextOptions o;
  o.min_count = 1;
  Corpus c = ReadLines(path, o);
  ASSERT_EQ(c.num_docs(), 3u);
  // goalie 4 + 201, ...one 201, ...two 201, the 30 letters 2: by count, then alphabetically.
  EXPECT_THAT(c.vocab, ::testing::ElementsAre("goalie", a20 + "one", a20 + "two", w30));
  EXPECT_THAT(c.doc(0), ::testing::ElementsAre(0, 0, 0, 0, 1, 3));
  EXPECT_THAT(c.doc(1), ::testing::ElementsAre(2, 3));
  ASSERT_EQ(c.doc(2).size(), 601u);
  for (size_t i = 0; i < 600; ++i) ASSERT_EQ(c.doc(2)[i], (std::vector<uint32_t>{0, 1, 2})[i % 3]) << i;
  EXPECT_EQ(c.doc(2)[600], 0u);
}

// Capitalised words too short to keep, many between the kept ones (the reader looks words up 256
// at a time, and lowercases capitalised ones into a buffer of its own meanwhile), drop out and
// leave the kept words whole.
TEST_F(CorpusTest, ShortCapitalisedWordsBetweenKeptOnesDropOut) {
  std::string doc = "d\t";
  for (int i = 0; i < 600; ++i) {
    for (int j = 0; j < 40; ++j) doc += "I A Of ";
    doc += i % 2 == 0 ? "Goalie " : "PUCK ";
  }
  TextOptions o;
  o.min_count = 1;
  Corpus c = ReadLines(Write("short.txt", doc + "\n"), o);
  EXPECT_THAT(c.vocab, ::testing::ElementsAre("goalie", "puck"));  // 300 each: alphabetical
  ASSERT_EQ(c.doc(0).size(), 600u);
  for (size_t i = 0; i < 600; ++i) ASSERT_EQ(c.doc(0)[i], i % 2) << i;
}

// An archive written by libarchive: `format` is "tar.gz", "tar.xz" or "zip".
void WriteArchive(const std::string& path, const std::string& format,
                  const std::vector<std::pair<std::string, std::string>>& files) {
  archive* a = archive_write_new();
  if (format == "zip") {
    archive_write_set_format_zip(a);
  } else {
    archive_write_set_format_pax_restricted(a);
    if (format == "tar.gz") archive_write_add_filter_gzip(a);
    if (format == "tar.xz") archive_write_add_filter_xz(a);
  }
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK);
  for (const auto& [name, body] : files) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_size(e, static_cast<la_int64_t>(body.size()));
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_write_header(a, e);
    archive_write_data(a, body.data(), body.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(CorpusTest, ReadsArchivesAndDetectsFormats) {
  TextOptions o;
  o.min_count = 2;
  for (const std::string format : {"tar.gz", "tar.xz", "zip"}) {
    std::string path = (dir_ / ("news." + format)).string();
    WriteArchive(path, format,
                 {{"sci/1", "Newsgroups: sci\n\nrocket rocket engine"}, {"sci/2", "engine rocket fuel"}});
    Corpus c = ReadCorpus(path, CorpusFormat::kAuto, o);
    ASSERT_EQ(c.num_docs(), 2u) << format;
    EXPECT_THAT(c.vocab, ::testing::ElementsAre("rocket", "engine")) << format;
    EXPECT_THAT(c.doc(0), ::testing::ElementsAre(0, 0, 1)) << format;
    EXPECT_EQ(c.doc_names[1], "sci/2");
  }
}

TEST_F(CorpusTest, CorruptArchivesAreErrorsNotShorterCorpora) {
  TextOptions o;
  o.min_count = 1;
  // Cut inside the compressed stream: the old reader took a gzip error for the end of the corpus.
  const std::string whole = (dir_ / "whole.tar.gz").string(), cut = (dir_ / "cut.tar.gz").string();
  std::string noise;
  for (int i = 0; i < 20000; ++i) noise += "word" + std::string(1, static_cast<char>('a' + i * 7 % 26)) + " ";
  WriteArchive(whole, "tar.gz", {{"a", noise}, {"b", noise}});
  const std::string bytes = ReadBytes(whole);
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_THROW(ReadCorpus(cut, CorpusFormat::kAuto, o), ParseError);
  // A tar header whose checksum does not match its bytes (a size field changed by hand).
  const std::string tar = (dir_ / "plain.tar").string(), bad = (dir_ / "bad.tar").string();
  WriteArchive(tar, "tar", {{"a", "rocket engine"}});
  std::string t = ReadBytes(tar);
  ASSERT_GT(t.size(), 512u);
  t[124] = '7';  // the size field's first digit: 8^10 times larger
  std::ofstream(bad, std::ios::binary) << t;
  try {
    ReadCorpus(bad, CorpusFormat::kAuto, o);
    ADD_FAILURE() << "a tar header with a wrong checksum was read";
  } catch (const ParseError& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith(bad + ": "));
  }
}

TEST_F(CorpusTest, DetectsLdac) {
  TextOptions o;
  Write("ldac/vocab.txt", "a\nb\n");
  std::string dat = Write("ldac/x.dat", "1 1:2\n");
  EXPECT_EQ(ReadCorpus(dat, CorpusFormat::kAuto, o).num_tokens(), 2u);
  EXPECT_THROW(ParseCorpusFormat("xml"), InvalidArgumentError);
}

TEST_F(CorpusTest, ReadsTheBundledApCorpus) {
  // Sizes as published with the corpus (data/README.md).
  Corpus c = ReadCorpus(PARASOL_DATA_DIR "/ap/ap.dat", CorpusFormat::kAuto, {});
  EXPECT_EQ(c.num_docs(), 2246u);
  EXPECT_EQ(c.vocab.size(), 10473u);
  EXPECT_EQ(c.num_tokens(), 435838u);
}

TEST_F(CorpusTest, MapsOntoAModelVocabulary) {
  Corpus c;
  c.vocab = {"x", "y", "z"};
  std::vector<uint32_t> doc{0, 1, 2, 2};
  c.AddDocument("d", doc);
  Corpus m = MapToVocabulary(c, {{"z", 0}, {"x", 1}}, 2);
  EXPECT_THAT(m.doc(0), ::testing::ElementsAre(1, 0, 0));
  EXPECT_THAT(m.vocab, ::testing::ElementsAre("z", "x"));
}

}  // namespace
}  // namespace parasol::apps::lda
