#include "parasol/core/csv_writer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CsvWriterTest : public ::testing::Test {
 protected:
  TestDir dir_{"csv_writer"};
};

TEST_F(CsvWriterTest, WritesHeaderAndQuotedRows) {
  std::string path = (dir_ / "out.csv").string();
  {
    CsvWriter w(path, {"algo", "note"});
    w.Row({"ring", "a,b"});
    w.Row({"hd", "say \"hi\""});
    w.Commit();
  }
  EXPECT_EQ(ReadAll(path), "algo,note\nring,\"a,b\"\nhd,\"say \"\"hi\"\"\"\n");
}

TEST_F(CsvWriterTest, EachRowIsInTheFileWhenRowReturns) {
  // A run is watched with tail -f, and a killed run keeps the rows it made.
  std::string path = (dir_ / "out.csv").string();
  CsvWriter w(path, {"step", "loss"});
  EXPECT_EQ(ReadAll(path), "step,loss\n");
  w.Row({"1", "0.5"});
  EXPECT_EQ(ReadAll(path), "step,loss\n1,0.5\n");
  w.Row({"2", "0.25"});
  EXPECT_EQ(ReadAll(path), "step,loss\n1,0.5\n2,0.25\n");
}

TEST_F(CsvWriterTest, WrongRowWidthAndBadDirectoryAreErrors) {
  CsvWriter w((dir_ / "x.csv").string(), {"a", "b"});
  EXPECT_THROW(w.Row({"1"}), InvalidArgumentError);
  EXPECT_THROW(CsvWriter((dir_ / "missing" / "x.csv").string(), {"a"}), IoError);
}

}  // namespace
}  // namespace parasol
