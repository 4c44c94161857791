#include "parasol/core/csv_reader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/testing.h"

namespace parasol {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CsvRecords, ReadsRecordsWithTheirLineNumbers) {
  const std::string path = WriteTestFile("jobs.csv", "name,time,n\r\na,0,1\r\n\nb,2.5,4\n");
  std::vector<std::pair<long, std::vector<std::string>>> got;
  const long last = ReadCsvRecords(
      path, "name,time", 3, [&](long line, const std::vector<std::string>& f) { got.emplace_back(line, f); });
  EXPECT_EQ(last, 4);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (std::pair<long, std::vector<std::string>>{2, {"a", "0", "1"}}));
  EXPECT_EQ(got[1], (std::pair<long, std::vector<std::string>>{4, {"b", "2.5", "4"}}));
  std::filesystem::remove(path);
}

TEST(CsvRecords, AWrongHeaderOrFieldCountNamesTheLine) {
  const auto read = [](const std::string& text) {
    const std::string path = WriteTestFile("bad.csv", text);
    return ErrorOf([&] { ReadCsvRecords(path, "name,time", 2, [](long, const auto&) {}); });
  };
  EXPECT_THAT(read("job,time\na,1\n"), HasSubstr(":1: expected the header 'name,time'"));
  EXPECT_THAT(read(""), HasSubstr(":1: expected the header"));
  EXPECT_THAT(read("name,time\na,1\nb,2,3\n"), HasSubstr(":3: 3 fields, expected 2"));
}

TEST(CsvTable, HandsOverTheHeaderThenEachRecord) {
  const std::string path = WriteTestFile("table.csv", "x,y,label\n1,2,a\n3,4,b\n");
  std::vector<std::string> header, labels;
  const long last = ReadCsvTable(
      path, [&](const auto& h) { header.assign(h.begin(), h.end()); },
      [&](long, const std::vector<std::string_view>& f) { labels.emplace_back(f[2]); });
  EXPECT_EQ(last, 3);
  EXPECT_EQ(header, (std::vector<std::string>{"x", "y", "label"}));
  EXPECT_EQ(labels, (std::vector<std::string>{"a", "b"}));
  std::filesystem::remove(path);
  const std::string bad = WriteTestFile("ragged.csv", "x,y\n1,2\n3\n");
  EXPECT_THAT(ErrorOf([&] {
                ReadCsvTable(
                    bad, [](const auto&) {}, [](long, const auto&) {});
              }),
              HasSubstr(":3: 1 fields, where the header has 2"));
  const std::string empty = WriteTestFile("empty.csv", "");
  EXPECT_THAT(ErrorOf([&] {
                ReadCsvTable(
                    empty, [](const auto&) {}, [](long, const auto&) {});
              }),
              HasSubstr(":1: expected a header line naming the columns"));
}

}  // namespace
}  // namespace parasol
