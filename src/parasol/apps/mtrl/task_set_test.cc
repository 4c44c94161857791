#include "parasol/apps/mtrl/task_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "parasol/core/error.h"
#include "parasol/core/testing.h"

namespace parasol::apps::mtrl {
namespace {

std::string ParseMessage(const std::string& path) {
  try {
    ReadTaskCsv(path);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TaskSetTest, GroupsRowsByTaskWhateverTheirOrder) {
  const std::string path = WriteTestFile("order.csv", "y,a,task,b\n1,10,7,11\n2,20,3,21\n3,30,7,31\n");
  const TaskSet s = ReadTaskCsv(path);
  EXPECT_THAT(s.task_ids, testing::ElementsAre(3, 7));
  EXPECT_THAT(s.offsets, testing::ElementsAre(0, 1, 3));
  EXPECT_THAT(s.feature_names, testing::ElementsAre("a", "b"));
  EXPECT_THAT(s.y, testing::ElementsAre(2, 1, 3));
  EXPECT_THAT(s.x, testing::ElementsAre(20, 21, 10, 11, 30, 31));
  EXPECT_EQ(s.IndexOf(7), 1);
  EXPECT_EQ(s.IndexOf(5), -1);
}

TEST(TaskSetTest, BadFilesNameTheLine) {
  EXPECT_THAT(ParseMessage(WriteTestFile("nolabel.csv", "task,a\n1,2\n")),
              testing::HasSubstr("nolabel.csv:1: no column named 'y'"));
  EXPECT_THAT(ParseMessage(WriteTestFile("notask.csv", "y,a\n1,2\n")),
              testing::HasSubstr("notask.csv:1: no column named 'task'"));
  EXPECT_THAT(ParseMessage(WriteTestFile("nofeat.csv", "task,y\n1,2\n")),
              testing::HasSubstr("no feature columns"));
  EXPECT_THAT(ParseMessage(WriteTestFile("frac.csv", "task,y,a\n1,2,3\n1.5,2,3\n")),
              testing::HasSubstr("frac.csv:3: task '1.5' is not a whole number"));
  EXPECT_THAT(ParseMessage(WriteTestFile("nan.csv", "task,y,a\n1,2,3\n1,2,nan\n")),
              testing::HasSubstr("nan.csv:3: column 3 'nan' is not a finite number"));
  EXPECT_THAT(ParseMessage(WriteTestFile("short.csv", "task,y,a\n1,2\n")),
              testing::HasSubstr("short.csv:2:"));
  EXPECT_THAT(ParseMessage(WriteTestFile("empty.csv", "task,y,a\n")), testing::HasSubstr("no samples"));
}

TEST(TaskSetTest, SplitKeepsEveryTaskOnBothSides) {
  TaskSet s;
  s.features = 1;
  for (int64_t t = 1; t <= 3; ++t) {
    s.task_ids.push_back(t);
    for (int j = 0; j < 10 * t; ++j) s.x.push_back(static_cast<double>(t * 100 + j)), s.y.push_back(0);
    s.offsets.push_back(s.y.size());
  }
  const TaskSplit split = SplitTasks(s, 0.7, 5);
  EXPECT_THAT(split.train.offsets, testing::ElementsAre(0, 7, 21, 42));
  EXPECT_THAT(split.test.offsets, testing::ElementsAre(0, 3, 9, 18));
  // Every sample once, on one side, with its own task.
  std::vector<double> all(split.train.x);
  all.insert(all.end(), split.test.x.begin(), split.test.x.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, s.x);
  for (size_t t = 0; t < 3; ++t)
    for (uint64_t j = split.test.offsets[t]; j < split.test.offsets[t + 1]; ++j)
      EXPECT_EQ(static_cast<int64_t>(split.test.x[j]) / 100, split.test.task_ids[t]);
  // Another seed, another split.
  EXPECT_NE(SplitTasks(s, 0.7, 6).test.x, split.test.x);
}

TEST(TaskSetTest, StandardizeKeepsAConstantColumnAsTheIntercept) {
  TaskSet s;
  s.features = 2;
  s.task_ids = {1};
  s.x = {1, 2, 1, 4, 1, 6};
  s.y = {3, 5, 7};
  s.offsets = {0, 3};
  const Standardizer st = FitStandardizer(s);
  Standardize(st, &s);
  const double sd = std::sqrt(8.0 / 3);
  EXPECT_THAT(
      s.x, testing::Pointwise(testing::DoubleNear(1e-12), std::vector<double>{1, -2 / sd, 1, 0, 1, 2 / sd}));
  EXPECT_THAT(s.y, testing::ElementsAre(-2, 0, 2));
  // A prediction equal to the target explains everything; the mean explains nothing.
  EXPECT_DOUBLE_EQ(ExplainedVariance(s, std::vector<double>{-2, 0, 2}), 1.0);
  EXPECT_DOUBLE_EQ(ExplainedVariance(s, std::vector<double>{0, 0, 0}), 0.0);
}

TEST(TaskSetTest, ReadsTheBundledSchools) {
  const TaskSet s = ReadTaskCsv(std::string(PARASOL_DATA_DIR) + "/school/school-20.csv");
  EXPECT_EQ(s.tasks(), 20u);
  EXPECT_EQ(s.features, 28u);
  EXPECT_EQ(s.samples(), 2346u);
}

}  // namespace
}  // namespace parasol::apps::mtrl
