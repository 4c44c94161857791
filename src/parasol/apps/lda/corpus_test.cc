#include "parasol/apps/lda/corpus.h"

#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"

namespace parasol::apps::lda {
namespace {

namespace fs = std::filesystem;

class CorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("lda_corpus_{}_{}", ::getpid(), counter_++);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
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
  static inline int counter_ = 0;
  fs::path dir_;
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
  std::string nnz = Write("uci4/docword.b.txt", "1\n3\n5\n1 1 1\n");
  Write("uci4/vocab.b.txt", "x\ny\nz\n");
  ExpectParseError([&] { ReadUci((dir_ / "uci4").string()); }, nnz, 4, "1 entries, the header says 5");
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

// A tar archive written by hand (ustar headers), gzip-compressed.
void WriteTarGz(const std::string& path, const std::vector<std::pair<std::string, std::string>>& files) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  for (const auto& [name, body] : files) {
    char h[512] = {};
    std::strncpy(h, name.c_str(), 99);
    std::snprintf(h + 124, 12, "%011o", static_cast<unsigned>(body.size()));
    h[156] = '0';
    std::memcpy(h + 257, "ustar", 5);
    gzwrite(gz, h, 512);
    gzwrite(gz, body.data(), static_cast<unsigned>(body.size()));
    std::string pad((512 - body.size() % 512) % 512, '\0');
    gzwrite(gz, pad.data(), static_cast<unsigned>(pad.size()));
  }
  std::string end(1024, '\0');
  gzwrite(gz, end.data(), 1024);
  gzclose(gz);
}

TEST_F(CorpusTest, ReadsTarGzAndDetectsFormats) {
  std::string tgz = (dir_ / "news.tar.gz").string();
  WriteTarGz(tgz, {{"sci/1", "Newsgroups: sci\n\nrocket rocket engine"}, {"sci/2", "engine rocket fuel"}});
  TextOptions o;
  o.min_count = 2;
  Corpus c = ReadCorpus(tgz, CorpusFormat::kAuto, o);
  ASSERT_EQ(c.num_docs(), 2u);
  EXPECT_THAT(c.vocab, ::testing::ElementsAre("rocket", "engine"));
  EXPECT_THAT(c.doc(0), ::testing::ElementsAre(0, 0, 1));

  std::string truncated = (dir_ / "cut.tar.gz").string();
  WriteTarGz(truncated, {{"x", std::string(2000, 'a')}});
  {  // keep only the first 1000 bytes of the archive, recompressed
    gzFile in = gzopen(truncated.c_str(), "rb");
    std::string head(1000, '\0');
    gzread(in, head.data(), 1000);
    gzclose(in);
    gzFile out = gzopen(truncated.c_str(), "wb");
    gzwrite(out, head.data(), 1000);
    gzclose(out);
  }
  EXPECT_THROW(ReadCorpus(truncated, CorpusFormat::kAuto, o), ParseError);

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
