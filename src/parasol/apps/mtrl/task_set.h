// Several regression tasks over the same features (the students of each school, the ratings of
// each user): what multi-task learners read, grouped task by task.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace parasol::apps::mtrl {

// Samples grouped by task, dense features. Task t's samples are [offsets[t], offsets[t + 1]).
struct TaskSet {
  size_t features = 0;
  std::vector<std::string> feature_names;  // empty for generated sets
  std::vector<int64_t> task_ids;           // ascending
  std::vector<uint64_t> offsets{0};
  std::vector<double> x;  // samples x features, row-major
  std::vector<double> y;

  size_t tasks() const { return task_ids.size(); }
  size_t samples() const { return y.size(); }
  size_t task_size(size_t t) const { return offsets[t + 1] - offsets[t]; }
  const double* row(size_t s) const { return x.data() + s * features; }
  // The index of task `id`, or -1.
  int64_t IndexOf(int64_t id) const;
};

// A CSV file with a header: one column holds the task (a whole number), one the target, every
// other column a feature. Rows of a task need not be adjacent. ParseError "path:line: ..." for a
// missing column, a field that is not a finite number (a task that is not a whole number), or a
// line with another number of fields than the header; "path: no samples" for an empty file.
TaskSet ReadTaskCsv(const std::string& path, const std::string& task_column = "task",
                    const std::string& label_column = "y");

// Each task's samples split at random, round(train_fraction x n) of them to train (at least one
// to each side when the task has two or more), as multi-task benchmarks split School.
struct TaskSplit {
  TaskSet train, test;
};
TaskSplit SplitTasks(const TaskSet& s, double train_fraction, uint64_t seed);

// Features to zero mean and unit variance and the target to zero mean, with the training set's
// statistics. A constant feature is kept as it is (it is the model's intercept).
struct Standardizer {
  std::vector<double> mean, scale;
  double y_mean = 0;
};
Standardizer FitStandardizer(const TaskSet& train);
void Standardize(const Standardizer& st, TaskSet* s);

// 1 - sum (y - prediction)^2 / sum (y - mean y)^2 over all of s's samples.
double ExplainedVariance(const TaskSet& s, std::span<const double> predictions);

}  // namespace parasol::apps::mtrl
