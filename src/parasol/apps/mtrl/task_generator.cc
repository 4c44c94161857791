#include "parasol/apps/mtrl/task_generator.h"

#include <cmath>
#include <random>

#include "parasol/core/error.h"

namespace parasol::apps::mtrl {
namespace {

// The generator's Omega: c J-like blocks (+c within a group, -c between paired groups) plus
// (1 - c) I, which is positive definite for 0 <= c < 1; then scaled to trace 1.
std::vector<double> BlockOmega(size_t m, size_t groups, double c) {
  std::vector<double> omega(m * m, 0.0);
  for (size_t i = 0; i < m; ++i) {
    for (size_t k = 0; k < m; ++k) {
      const size_t gi = i % groups, gk = k % groups;
      double v = 0;
      if (gi == gk)
        v = c;
      else if (gi / 2 == gk / 2)
        v = -c;
      omega[i * m + k] = (v + (i == k ? 1 - c : 0.0)) / static_cast<double>(m);
    }
  }
  return omega;
}

}  // namespace

GeneratedTasks GenerateTasks(const TaskGeneratorOptions& o) {
  if (o.tasks == 0 || o.groups == 0 || o.features == 0 || o.samples_per_task == 0 || !(o.correlation >= 0) ||
      !(o.correlation < 1) || !(o.noise >= 0))
    throw InvalidArgumentError("task generator: counts must be positive, 0 <= correlation < 1, noise >= 0");
  const size_t m = o.tasks, d = o.features;
  GeneratedTasks g;
  g.omega = BlockOmega(m, o.groups, o.correlation);
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> normal;
  std::vector<double> z(d * m);
  for (double& v : z) v = normal(rng);
  g.weights.assign(m * d, 0.0);
  const double root_m = std::sqrt(static_cast<double>(m));
  for (size_t i = 0; i < m; ++i)
    for (size_t f = 0; f < d; ++f)
      for (size_t k = 0; k < m; ++k) g.weights[i * d + f] += z[f * m + k] * g.omega[k * m + i] * root_m;
  TaskSet& s = g.set;
  s.features = d;
  for (size_t i = 0; i < m; ++i) {
    s.task_ids.push_back(static_cast<int64_t>(i + 1));
    for (size_t j = 0; j < o.samples_per_task; ++j) {
      double y = 0;
      for (size_t f = 0; f < d; ++f) {
        const double x = normal(rng);
        s.x.push_back(x);
        y += g.weights[i * d + f] * x;
      }
      s.y.push_back(y + o.noise * normal(rng));
    }
    s.offsets.push_back(s.y.size());
  }
  return g;
}

}  // namespace parasol::apps::mtrl
