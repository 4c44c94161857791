#include "parasol/apps/lda/lda_checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::lda {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class LdaCheckpointMeta : public ::testing::Test {
 protected:
  void SetUp() override {
    meta_ = {.iteration = 40,
             .topics = 3,
             .vocab = 10,
             .docs = 4,
             .tokens = 20,
             .processes = 2,
             .alpha = 0.5,
             .beta = 0.01,
             .topic_alpha = {0.1, 0.25, 2.5},
             .seed = 7};
    LocalFileSystem local;
    WriteMeta(local, dir_.string(), meta_);
  }

  // meta.txt with its topic_alpha line's value replaced.
  void SetTopicAlpha(const std::string& value) {
    const fs::path path = dir_ / "meta.txt";
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    const std::string edited =
        std::regex_replace(text.str(), std::regex("topic_alpha [^\n]*"), "topic_alpha " + value);
    std::ofstream(path, std::ios::trunc) << edited;
  }

  // The error ReadMeta throws, as text.
  std::string Error() {
    try {
      ReadMeta(dir_.string());
    } catch (const ParseError& e) {
      return e.what();
    }
    return "no error";
  }

  TestDir dir_{"lda_meta"};
  CheckpointMeta meta_;
};

TEST_F(LdaCheckpointMeta, RoundTripsEveryField) {
  const CheckpointMeta m = ReadMeta(dir_.string());
  EXPECT_EQ(m.iteration, 40u);
  EXPECT_EQ(m.topics, 3u);
  EXPECT_EQ(m.vocab, 10u);
  EXPECT_EQ(m.docs, 4u);
  EXPECT_EQ(m.tokens, 20u);
  EXPECT_EQ(m.processes, 2u);
  EXPECT_EQ(m.alpha, 0.5);
  EXPECT_EQ(m.beta, 0.01);
  EXPECT_THAT(m.topic_alpha, ::testing::ElementsAre(0.1, 0.25, 2.5));
  EXPECT_EQ(m.seed, 7u);
}

// A bad topic_alpha line names the file, its line and what is wrong.
TEST_F(LdaCheckpointMeta, AMalformedFittedAlphaNamesTheFileAndLine) {
  SetTopicAlpha("0.1,x,2.5");
  EXPECT_THAT(Error(), HasSubstr("'x' is not a positive number"));
  EXPECT_THAT(Error(), ::testing::ContainsRegex("/meta\\.txt:[0-9]+: "));
  SetTopicAlpha("0.1,-2,2.5");
  EXPECT_THAT(Error(), HasSubstr("'-2' is not a positive number"));
  SetTopicAlpha("0.1,0.2");
  EXPECT_THAT(Error(), HasSubstr("2 values for 3 topics"));
  SetTopicAlpha("0.1,0.2,0.3,0.4");
  EXPECT_THAT(Error(), HasSubstr("more than 3 values"));
  SetTopicAlpha("0.1,,0.3");
  EXPECT_THAT(Error(), HasSubstr("'' is not a positive number"));
}

}  // namespace
}  // namespace parasol::apps::lda
