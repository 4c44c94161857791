// Regression tasks drawn with a known task relationship, to check that MTRL recovers it.
#pragma once

#include <cstdint>
#include <vector>

#include "parasol/apps/mtrl/task_set.h"

namespace parasol::apps::mtrl {

struct TaskGeneratorOptions {
  size_t tasks = 12;
  size_t groups = 4;  // tasks in `groups` equal groups (task i in group i % groups)
  size_t features = 20;
  size_t samples_per_task = 40;
  // Omega is correlation within a group, -correlation between groups 2h and 2h + 1, 0 otherwise.
  double correlation = 0.8;
  double noise = 0.5;  // standard deviation of the target's noise
  uint64_t seed = 1;
};

struct GeneratedTasks {
  TaskSet set;
  std::vector<double> omega;    // tasks x tasks, trace 1: the relationship the tasks were drawn with
  std::vector<double> weights;  // tasks x features: the true weights
};

// Weights W = Z Omega x sqrt(m) (Z: features x tasks, standard normal), so that W'W / d tends to
// m Omega^2 and MTRL's estimate (W'W)^1/2 over its trace tends to Omega as features grow; features
// standard normal; y = w_task . x + noise.
GeneratedTasks GenerateTasks(const TaskGeneratorOptions& o);

}  // namespace parasol::apps::mtrl
