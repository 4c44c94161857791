#include "parasol/apps/mtrl/task_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "parasol/core/csv_reader.h"
#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol::apps::mtrl {

int64_t TaskSet::IndexOf(int64_t id) const {
  auto it = std::lower_bound(task_ids.begin(), task_ids.end(), id);
  return it != task_ids.end() && *it == id ? it - task_ids.begin() : -1;
}

namespace {

// Samples gathered per task id, flattened into a TaskSet in ascending task order.
struct TaskRows {
  std::vector<double> x, y;
};

TaskSet Flatten(std::map<int64_t, TaskRows>& by_task, size_t features) {
  TaskSet s;
  s.features = features;
  for (auto& [id, rows] : by_task) {
    s.task_ids.push_back(id);
    s.x.insert(s.x.end(), rows.x.begin(), rows.x.end());
    s.y.insert(s.y.end(), rows.y.begin(), rows.y.end());
    s.offsets.push_back(s.y.size());
    rows = {};
  }
  return s;
}

size_t ColumnOf(const std::vector<std::string_view>& fields, const std::string& name, const std::string& path,
                std::string_view role) {
  auto it = std::find(fields.begin(), fields.end(), name);
  if (it == fields.end())
    throw ParseError(path, 1, fmt::format("no column named '{}' (the {}) in the header", name, role));
  return static_cast<size_t>(it - fields.begin());
}

}  // namespace

TaskSet ReadTaskCsv(const std::string& path, const std::string& task_column,
                    const std::string& label_column) {
  size_t task_col = 0, label_col = 0;
  std::vector<std::string> names;
  std::map<int64_t, TaskRows> by_task;
  auto header = [&](const std::vector<std::string_view>& fields) {
    task_col = ColumnOf(fields, task_column, path, "task");
    label_col = ColumnOf(fields, label_column, path, "target");
    if (task_col == label_col) throw ParseError(path, 1, "the task and the target are the same column");
    for (size_t c = 0; c < fields.size(); ++c)
      if (c != task_col && c != label_col) names.emplace_back(fields[c]);
    if (names.empty()) throw ParseError(path, 1, "no feature columns besides the task and the target");
  };
  ReadCsvTable(path, header, [&](long lineno, const std::vector<std::string_view>& fields) {
    TaskRows& rows = by_task[ParseField<int64_t>(fields[task_col], path, lineno, "task")];
    rows.y.push_back(ParseField<double>(fields[label_col], path, lineno, "target"));
    for (size_t c = 0; c < fields.size(); ++c) {
      if (c == task_col || c == label_col) continue;
      double v = 0;
      if (!ParseNumber(fields[c], &v))
        throw ParseError(path, lineno,
                         fmt::format("column {} '{}' is not a finite number", c + 1, fields[c]));
      rows.x.push_back(v);
    }
  });
  if (by_task.empty()) throw ParseError(path, 0, "no samples after the header");
  TaskSet s = Flatten(by_task, names.size());
  s.feature_names = std::move(names);
  return s;
}

TaskSplit SplitTasks(const TaskSet& s, double train_fraction, uint64_t seed) {
  std::map<int64_t, TaskRows> train, test;
  std::vector<uint64_t> order;
  for (size_t t = 0; t < s.tasks(); ++t) {
    const size_t n = s.task_size(t);
    order.resize(n);
    std::iota(order.begin(), order.end(), s.offsets[t]);
    std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(s.task_ids[t]));
    std::shuffle(order.begin(), order.end(), rng);
    auto k = static_cast<size_t>(std::lround(train_fraction * static_cast<double>(n)));
    if (n >= 2) k = std::clamp<size_t>(k, 1, n - 1);
    for (size_t i = 0; i < n; ++i) {
      TaskRows& to = (i < k ? train : test)[s.task_ids[t]];
      to.x.insert(to.x.end(), s.row(order[i]), s.row(order[i]) + s.features);
      to.y.push_back(s.y[order[i]]);
    }
  }
  TaskSplit split{Flatten(train, s.features), Flatten(test, s.features)};
  split.train.feature_names = split.test.feature_names = s.feature_names;
  return split;
}

Standardizer FitStandardizer(const TaskSet& train) {
  const size_t d = train.features, n = train.samples();
  Standardizer st{std::vector<double>(d, 0.0), std::vector<double>(d, 1.0), 0};
  if (n == 0) return st;
  std::vector<double> sq(d, 0.0);
  for (size_t s = 0; s < n; ++s) {
    for (size_t f = 0; f < d; ++f) st.mean[f] += train.row(s)[f];
    st.y_mean += train.y[s];
  }
  for (double& m : st.mean) m /= static_cast<double>(n);
  st.y_mean /= static_cast<double>(n);
  for (size_t s = 0; s < n; ++s)
    for (size_t f = 0; f < d; ++f) sq[f] += (train.row(s)[f] - st.mean[f]) * (train.row(s)[f] - st.mean[f]);
  for (size_t f = 0; f < d; ++f) {
    const double sd = std::sqrt(sq[f] / static_cast<double>(n));
    if (sd > 1e-12 * std::max(1.0, std::abs(st.mean[f]))) {
      st.scale[f] = sd;
    } else {
      st.mean[f] = 0;  // constant: left as it is
    }
  }
  return st;
}

void Standardize(const Standardizer& st, TaskSet* s) {
  for (size_t i = 0; i < s->samples(); ++i) {
    double* x = s->x.data() + i * s->features;
    for (size_t f = 0; f < s->features; ++f) x[f] = (x[f] - st.mean[f]) / st.scale[f];
    s->y[i] -= st.y_mean;
  }
}

double ExplainedVariance(const TaskSet& s, std::span<const double> predictions) {
  const double mean = std::accumulate(s.y.begin(), s.y.end(), 0.0) / static_cast<double>(s.samples());
  double sse = 0, sst = 0;
  for (size_t i = 0; i < s.samples(); ++i) {
    sse += (s.y[i] - predictions[i]) * (s.y[i] - predictions[i]);
    sst += (s.y[i] - mean) * (s.y[i] - mean);
  }
  return sst > 0 ? 1 - sse / sst : 0;
}

}  // namespace parasol::apps::mtrl
