#include "parasol/core/line_reader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/testing.h"

namespace parasol {
namespace {

using ::testing::HasSubstr;

std::vector<std::pair<long, std::string>> ReadAll(LineReader& in) {
  std::vector<std::pair<long, std::string>> lines;
  for (std::string_view line; in.Next(&line);) lines.emplace_back(in.line_number(), std::string(line));
  return lines;
}

// Line numbers count every line of the file, skipped ones too, so an error points at the line a
// user sees in an editor; "\r\n" endings and a last line without one read as the others.
TEST(LineReader, SkipsCommentsAndBlanksButCountsThem) {
  const std::string path =
      WriteTestFile("lines.txt", "# header\nfirst\r\n\n   \n  # indented comment\nsecond 2\nlast");
  LineReader in(path, {.comment = '#', .skip_blank = true});
  using Lines = std::vector<std::pair<long, std::string>>;
  EXPECT_EQ(ReadAll(in), (Lines{{2, "first"}, {6, "second 2"}, {7, "last"}}));
  LineReader plain(path);
  EXPECT_EQ(ReadAll(plain).size(), 7u);
  EXPECT_EQ(plain.file_size_bytes(), 55u);
  std::filesystem::remove(path);
}

// A comment may also end a line: "a b # c" reads "a b ", and a line that was only a comment after
// blanks is skipped as blank. Without the option such a line is read whole.
TEST(LineReader, TrailingCommentsAreDropped) {
  const std::string path = WriteTestFile("trailing.txt", "a b # c\n   # only\n#x\nd#e\n");
  LineReader in(path, {.comment = '#', .skip_blank = true, .trailing_comment = true});
  using Lines = std::vector<std::pair<long, std::string>>;
  EXPECT_EQ(ReadAll(in), (Lines{{1, "a b "}, {4, "d"}}));
  LineReader whole(path, {.comment = '#', .skip_blank = true});
  EXPECT_EQ(ReadAll(whole), (Lines{{1, "a b # c"}, {4, "d#e"}}));
  std::filesystem::remove(path);
}

TEST(LineReader, ErrorsNameTheFileAndTheLine) {
  const std::string path = WriteTestFile("numbers.txt", "12\nlots\n7000\n");
  LineReader in(path);
  std::string_view line;
  ASSERT_TRUE(in.Next(&line));
  EXPECT_EQ(in.Number<int>(line, "count"), 12);
  ASSERT_TRUE(in.Next(&line));
  EXPECT_THAT([&] { in.Number<int>(line, "count"); },
              ::testing::ThrowsMessage<ParseError>(HasSubstr(":2: count 'lots' is not a whole number")));
  ASSERT_TRUE(in.Next(&line));
  EXPECT_THAT([&] { in.NumberIn<int>(line, "count", 1, 100); },
              ::testing::ThrowsMessage<ParseError>(HasSubstr(":3: count 7000 is not in [1, 100]")));
  EXPECT_THAT([&] { in.Fail("what is wrong"); },
              ::testing::ThrowsMessage<ParseError>(HasSubstr(path + ":3: what is wrong")));
  EXPECT_FALSE(in.Next(&line));
  std::filesystem::remove(path);
}

TEST(LineReader, AMissingFileIsAnIoErrorNamingIt) {
  EXPECT_THAT([] { LineReader in("/nonexistent/parasol/file.txt"); },
              ::testing::ThrowsMessage<IoError>(HasSubstr("/nonexistent/parasol/file.txt: cannot open")));
}

}  // namespace
}  // namespace parasol
