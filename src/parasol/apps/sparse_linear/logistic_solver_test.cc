#include "parasol/apps/sparse_linear/logistic_solver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

#include "parasol/apps/sparse_linear/testing.h"
#include "parasol/data/dataset.h"
#include "parasol/data/design_generator.h"
#include "parasol/data/libsvm_reader.h"

namespace parasol::apps::sparse_linear {
namespace {

std::vector<LinearFit> FitOnRanks(int ranks, const data::Dataset& d, const PathOptions& o) {
  return FitOnThreads(FitLogistic, ranks, d, o);
}

data::Dataset Adult() { return data::ReadLibsvm(std::string(PARASOL_DATA_DIR) + "/libsvm/a9a-2000"); }

PathOptions Options(double lambda) {
  PathOptions o;
  o.lambda = lambda;
  o.tolerance = 1e-9;
  o.engine.schedule = {.order = modelpar::Order::kPriority, .schedule_size = 8, .dependency_threshold = 0.3};
  return o;
}

// The test's own view of a fit: each sample's loss slope theta_i = sigmoid(-y_i (x_i.w + b)),
// with labels +-1 from the data set's two values.
struct Evaluation {
  std::vector<double> gradient;  // per feature: (1/n) sum_i -y_i x_ij theta_i
  double intercept_gradient = 0;
  double loss = 0;  // (1/n) sum_i log(1 + exp(-y_i margin_i))
};

Evaluation Evaluate(const data::Dataset& d, const LinearFit& f) {
  std::map<uint32_t, double> w(f.weights.begin(), f.weights.end());
  const double low = *std::min_element(d.labels.begin(), d.labels.end());
  const double n = static_cast<double>(d.rows());
  Evaluation ev;
  ev.gradient.assign(d.cols, 0.0);
  for (size_t i = 0; i < d.rows(); ++i) {
    const double y = d.labels[i] == low ? -1.0 : 1.0;
    double margin = f.intercept;
    for (size_t k = 0; k < d.row_indices(i).size(); ++k) {
      auto it = w.find(d.row_indices(i)[k]);
      if (it != w.end()) margin += it->second * d.row_values(i)[k];
    }
    const double theta = 1 / (1 + std::exp(y * margin));
    ev.loss += std::log1p(std::exp(-y * margin)) / n;
    ev.intercept_gradient -= y * theta / n;
    for (size_t k = 0; k < d.row_indices(i).size(); ++k)
      ev.gradient[d.row_indices(i)[k]] -= y * d.row_values(i)[k] * theta / n;
  }
  return ev;
}

// The optimality conditions of the L1 (l1_ratio 1) objective: the intercept's gradient is 0, and
// per feature the gradient is -lambda sign(w_j), or within [-lambda, lambda] at 0.
void ExpectKkt(const data::Dataset& d, const LinearFit& f, double tol) {
  const Evaluation ev = Evaluate(d, f);
  EXPECT_NEAR(ev.intercept_gradient, 0.0, tol * f.lambda);
  std::map<uint32_t, double> w(f.weights.begin(), f.weights.end());
  for (uint32_t j = 0; j < d.cols; ++j) {
    const double wj = w.contains(j) ? w[j] : 0.0;
    if (wj != 0) {
      EXPECT_NEAR(ev.gradient[j], -f.lambda * (wj > 0 ? 1 : -1), tol * f.lambda) << "feature " << j;
    } else {
      EXPECT_LE(std::abs(ev.gradient[j]), f.lambda * (1 + tol)) << "feature " << j;
    }
  }
}

TEST(Logistic, KktHoldsOnAdult) {
  const data::Dataset d = Adult();
  const LinearFit f = FitOnRanks(1, d, Options(0.002))[0];
  ASSERT_EQ(f.status, FitStatus::kConverged);
  EXPECT_GT(f.weights.size(), 10u);
  EXPECT_LT(f.weights.size(), 123u);
  ExpectKkt(d, f, 1e-3);
  // The reported objective is the test's own loss plus the penalty.
  double l1 = 0;
  for (const auto& [id, w] : f.weights) l1 += std::abs(w);
  EXPECT_NEAR(f.last.objective, Evaluate(d, f).loss + f.lambda * l1, 1e-9);
}

// Above lambda_max every weight is 0 and the intercept is the log-odds of the classes; just
// below it, one weight moves.
// Between checks the coordinates minimise a quadratic model of the loss with the curvature frozen
// at the last check; the check's line search keeps only as much of that step as lowers the
// objective, so within a lambda no check sees it rise: along a path whose blocks of 8 correlated
// coordinates a round overshoot (without the line search the objective rises here), on one rank
// and on two.
TEST(Logistic, NoCheckSeesTheObjectiveRise) {
  const data::Dataset d = Adult();
  for (int ranks : {1, 2}) {
    PathOptions o = Options(0);
    o.path_length = 6;
    o.path_min_ratio = 0.01;
    o.tolerance = 1e-7;
    std::mutex mu;  // every rank (a thread here) reports its checks
    std::map<std::thread::id, std::vector<FitCheck>> checks;
    o.on_check = [&](const FitCheck& c) {
      std::lock_guard<std::mutex> lock(mu);
      checks[std::this_thread::get_id()].push_back(c);
    };
    const std::vector<LinearFit> fits = FitOnRanks(ranks, d, o);
    ASSERT_EQ(fits.size(), 6u);
    ASSERT_EQ(checks.size(), static_cast<size_t>(ranks));
    for (const auto& [rank, seen] : checks) {
      ASSERT_GE(seen.size(), 6u);
      for (size_t i = 1; i < seen.size(); ++i) {
        if (seen[i].lambda != seen[i - 1].lambda) continue;
        EXPECT_LE(seen[i].objective, seen[i - 1].objective * (1 + 1e-12))
            << "check " << i << " (lambda " << seen[i].lambda << "), " << ranks << " ranks";
      }
    }
  }
}

TEST(Logistic, LambdaMaxIsWhereTheFirstWeightMoves) {
  const data::Dataset d = Adult();
  const double top = LogisticLambdaMax(d, 1.0, true);
  const LinearFit above = FitOnRanks(1, d, Options(top * 1.001))[0];
  EXPECT_TRUE(above.weights.empty());
  double positives = 0;
  for (double y : d.labels) positives += y > 0;
  EXPECT_NEAR(above.intercept, std::log(positives / (d.rows() - positives)), 1e-6);
  const LinearFit below = FitOnRanks(1, d, Options(top * 0.98))[0];
  EXPECT_EQ(below.weights.size(), 1u);
}

TEST(Logistic, ElasticNetAndNoInterceptMeetTheirConditions) {
  const data::Dataset d = Adult();
  PathOptions o = Options(0.004);
  o.l1_ratio = 0.5;
  o.intercept = false;
  const LinearFit f = FitOnRanks(1, d, o)[0];
  ASSERT_EQ(f.status, FitStatus::kConverged);
  EXPECT_EQ(f.intercept, 0.0);
  const Evaluation ev = Evaluate(d, f);
  std::map<uint32_t, double> w(f.weights.begin(), f.weights.end());
  const double l1 = o.lambda * 0.5, l2 = o.lambda * 0.5;
  for (uint32_t j = 0; j < d.cols; ++j) {
    const double wj = w.contains(j) ? w[j] : 0.0;
    const double g = ev.gradient[j] + l2 * wj;
    if (wj != 0) {
      EXPECT_NEAR(g, -l1 * (wj > 0 ? 1 : -1), 1e-3 * l1) << "feature " << j;
    } else {
      EXPECT_LE(std::abs(g), l1 * (1 + 1e-3)) << "feature " << j;
    }
  }
}

TEST(Logistic, RanksAndThreadsReachTheSameObjective) {
  data::DesignOptions g;
  g.rows = 3000;
  g.cols = 400;
  g.block_size = 8;
  g.blocks_per_row = 10;
  g.correlation = 0.4;
  g.true_nonzeros = 15;
  g.classify = true;
  g.seed = 5;
  const data::Design design = data::GenerateDesign(g);
  PathOptions o = Options(0.01);
  o.tolerance = 1e-8;
  const LinearFit one = FitOnRanks(1, design.data, o)[0];
  ASSERT_EQ(one.status, FitStatus::kConverged);
  ExpectKkt(design.data, one, 1e-2);
  for (int ranks : {2}) {
    o.engine.workers = 2;
    const LinearFit many = FitOnRanks(ranks, design.data, o)[0];
    EXPECT_EQ(many.status, FitStatus::kConverged) << ranks;
    // Both within 1e-8 of the optimum, relative to the objective at w = 0 (below 1).
    EXPECT_NEAR(many.last.objective, one.last.objective, 2e-8) << ranks << " ranks";
  }
}

// LIBLINEAR's inner stopping and order: each sweep of the working set is in a fresh random order,
// and a check comes once a sweep leaves the quadratic model solved well enough for the fit's stage
// (while it is far off, one sweep; near the end, many). The fit meets its conditions; the checks
// come after one sweep at times and never after the thousand sweeps a model is given at most.
TEST(Logistic, ShuffledSweepsCheckOnceTheModelIsSolved) {
  const data::Dataset d = Adult();
  PathOptions o = Options(0.002);
  o.engine.schedule = {.order = modelpar::Order::kShuffled, .schedule_size = 1, .dependency_threshold = 1};
  std::vector<uint64_t> at;
  o.on_check = [&](const FitCheck& c) { at.push_back(c.updates); };
  const LinearFit f = FitOnRanks(1, d, o)[0];
  ASSERT_EQ(f.status, FitStatus::kConverged);
  ExpectKkt(d, f, 1e-3);
  ASSERT_GE(at.size(), 3u);
  uint64_t least = UINT64_MAX, most = 0;
  for (size_t i = 1; i < at.size(); ++i) {
    least = std::min(least, at[i] - at[i - 1]);
    most = std::max(most, at[i] - at[i - 1]);
  }
  EXPECT_LE(least, d.cols + 1u);  // one sweep of a working set of at most every coordinate
  EXPECT_GT(most, 10 * least);
  EXPECT_LT(most, 100u * (d.cols + 1));
}

// A path from lambda_max down, warm-started: nonzeros grow and every fit converges.
TEST(Logistic, PathGrowsTheModel) {
  const data::Dataset d = Adult();
  PathOptions o = Options(0);
  o.path_length = 6;
  o.path_min_ratio = 0.01;
  o.tolerance = 1e-7;
  const std::vector<LinearFit> fits = FitOnRanks(1, d, o);
  ASSERT_EQ(fits.size(), 6u);
  EXPECT_TRUE(fits[0].weights.empty());
  for (size_t k = 0; k < fits.size(); ++k) EXPECT_EQ(fits[k].status, FitStatus::kConverged) << k;
  EXPECT_GT(fits.back().weights.size(), fits[2].weights.size());
  ExpectKkt(d, fits.back(), 1e-2);
}

TEST(Logistic, LabelsMustBeTwoClasses) {
  data::Dataset d = Adult();
  d.labels[7] = 3;
  comm::InProcessWorld world(1);
  auto errors =
      comm::testing::RunRanks(world, [&](comm::Context& ctx) { FitLogistic(ctx, d, Options(0.01)); });
  EXPECT_THAT(comm::testing::Message(errors[0]), ::testing::HasSubstr("two values; the data set has 3"));
}

}  // namespace
}  // namespace parasol::apps::sparse_linear
