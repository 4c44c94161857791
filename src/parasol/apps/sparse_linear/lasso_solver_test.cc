#include "parasol/apps/sparse_linear/lasso_solver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <map>

#include "parasol/apps/sparse_linear/testing.h"
#include "parasol/data/dataset.h"
#include "parasol/data/design_generator.h"

namespace parasol::apps::sparse_linear {
namespace {

std::vector<LinearFit> FitOnRanks(int ranks, const data::Dataset& d, const PathOptions& o) {
  return FitOnThreads(FitLasso, ranks, d, o);
}

// Dense columns of the data set (the test's own view of it).
std::vector<std::vector<double>> Columns(const data::Dataset& d) {
  std::vector<std::vector<double>> x(d.cols, std::vector<double>(d.rows(), 0.0));
  for (size_t r = 0; r < d.rows(); ++r) {
    for (size_t k = 0; k < d.row_indices(r).size(); ++k) x[d.row_indices(r)[k]][r] = d.row_values(r)[k];
  }
  return x;
}

// y - b - Xw of a fit, computed here.
std::vector<double> Residual(const data::Dataset& d, const LinearFit& f) {
  std::map<uint32_t, double> w(f.weights.begin(), f.weights.end());
  std::vector<double> r(d.rows());
  for (size_t i = 0; i < d.rows(); ++i) {
    double pred = f.intercept;
    for (size_t k = 0; k < d.row_indices(i).size(); ++k) {
      auto it = w.find(d.row_indices(i)[k]);
      if (it != w.end()) pred += it->second * d.row_values(i)[k];
    }
    r[i] = d.labels[i] - pred;
  }
  return r;
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// The optimality conditions of (1/2n)||y - Xw - b||^2 + l1 ||w||_1 + l2/2 ||w||^2, checked on the
// returned model: sum r = 0, and per feature x_j.r/n - l2 w_j = l1 sign(w_j), or |.| <= l1 at 0.
void ExpectKkt(const data::Dataset& d, const LinearFit& f, double l1_ratio, double tol) {
  const auto x = Columns(d);
  const std::vector<double> r = Residual(d, f);
  const double n = static_cast<double>(d.rows());
  double sum = 0;
  for (double v : r) sum += v;
  EXPECT_NEAR(sum / n, 0.0, tol * f.lambda);
  std::map<uint32_t, double> w(f.weights.begin(), f.weights.end());
  const double l1 = f.lambda * l1_ratio, l2 = f.lambda * (1 - l1_ratio);
  for (uint32_t j = 0; j < d.cols; ++j) {
    const double wj = w.contains(j) ? w[j] : 0.0;
    const double g = Dot(x[j], r) / n - l2 * wj;
    if (wj != 0) {
      EXPECT_NEAR(g, l1 * (wj > 0 ? 1 : -1), tol * l1) << "feature " << j;
    } else {
      EXPECT_LE(std::abs(g), l1 * (1 + tol)) << "feature " << j;
    }
  }
}

PathOptions Options(double lambda) {
  PathOptions o;
  o.lambda = lambda;
  o.tolerance = 1e-10;
  o.engine.schedule = {.order = modelpar::Order::kPriority, .schedule_size = 8, .dependency_threshold = 0.3};
  return o;
}

// Orthogonal, centred columns: the solution is soft thresholding of x_j.y / n, coordinate by
// coordinate, and the intercept is the mean label.
TEST(Lasso, OrthogonalDesignIsSoftThresholding) {
  data::Dataset d;
  const double h[8][3] = {{1, 1, 1},  {-1, 1, 1},  {1, -1, 1},  {-1, -1, 1},
                          {1, 1, -1}, {-1, 1, -1}, {1, -1, -1}, {-1, -1, -1}};
  const double y[8] = {3, -1, 2.5, 0, 1, 4, -2, 0.5};
  for (int i = 0; i < 8; ++i) {
    const std::vector<uint32_t> ids{0, 1, 2};
    d.AddRow(y[i], ids, std::vector<double>(h[i], h[i] + 3));
  }
  const double lambda = 0.4;
  std::vector<LinearFit> fits = FitOnRanks(1, d, Options(lambda));
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].status, FitStatus::kConverged);
  std::map<uint32_t, double> w(fits[0].weights.begin(), fits[0].weights.end());
  double mean = 0;
  for (double v : y) mean += v / 8;
  EXPECT_NEAR(fits[0].intercept, mean, 1e-9);
  for (uint32_t j = 0; j < 3; ++j) {
    double xy = 0;
    for (int i = 0; i < 8; ++i) xy += h[i][j] * y[i] / 8;
    const double expected = xy > lambda ? xy - lambda : (xy < -lambda ? xy + lambda : 0.0);
    EXPECT_NEAR(w.contains(j) ? w[j] : 0.0, expected, 1e-9) << "feature " << j;
  }
}

data::Dataset Riboflavin() {
  return data::ReadDataset(std::string(PARASOL_DATA_DIR) + "/riboflavin/riboflavin-500.csv");
}

TEST(Lasso, KktHoldsOnRealData) {
  const data::Dataset d = Riboflavin();
  const double top = LassoLambdaMax(d, 1.0, true);
  std::vector<LinearFit> fits = FitOnRanks(1, d, Options(0.05 * top));
  EXPECT_EQ(fits[0].status, FitStatus::kConverged);
  EXPECT_GT(fits[0].weights.size(), 5u);
  EXPECT_LE(fits[0].last.relative_gap, 1e-10);
  ExpectKkt(d, fits[0], 1.0, 1e-3);
  // Just above lambda_max every weight is 0; just below, one is not.
  EXPECT_TRUE(FitOnRanks(1, d, Options(1.0001 * top))[0].weights.empty());
  EXPECT_FALSE(FitOnRanks(1, d, Options(0.99 * top))[0].weights.empty());
}

// A check reads every entry (71 x 500 dense, and the residuals):
// the updates between two checks read at least half as many (251 updates of a 71-row column) when
// the working set is large enough that 60 sweeps of it do. (A tolerance of 1e-14 keeps the fit
// going for its 20,000 rounds.)
TEST(Lasso, ChecksAreSpacedByTheWorkTheyCost) {
  const data::Dataset d = Riboflavin();
  PathOptions o = Options(0.05 * LassoLambdaMax(d, 1.0, true));
  o.tolerance = 1e-14;
  o.max_rounds = 20000;
  o.engine.schedule.schedule_size = 1;
  std::vector<uint64_t> updates;
  o.on_check = [&](const FitCheck& c) { updates.push_back(c.updates); };
  FitOnRanks(1, d, o);
  ASSERT_GE(updates.size(), 3u);
  for (size_t k = 1; k + 1 < updates.size(); ++k) {
    EXPECT_GE(updates[k] - updates[k - 1], 251u) << "check " << k;
  }
}

// Down a warm-started path each lambda's working set is small and settles in a few sweeps: its
// checks come after at most 60 sweeps of it, not after half a check's work (251 updates here),
// and every lambda still converges.
TEST(Lasso, ASmallWorkingSetIsCheckedWithinSixtySweeps) {
  const data::Dataset d = Riboflavin();
  PathOptions o = Options(0);
  o.path_length = 10;
  o.path_min_ratio = 0.5;
  o.tolerance = 1e-9;
  o.engine.schedule = {.order = modelpar::Order::kCyclic, .schedule_size = 1, .dependency_threshold = 1};
  std::vector<FitCheck> checks;
  o.on_check = [&](const FitCheck& c) { checks.push_back(c); };
  const std::vector<LinearFit> fits = FitOnRanks(1, d, o);
  ASSERT_EQ(fits.size(), 10u);
  size_t quick = 0;
  for (size_t k = 1; k < checks.size(); ++k) {
    quick += checks[k].lambda == checks[k - 1].lambda && checks[k].updates - checks[k - 1].updates < 251;
  }
  EXPECT_GE(quick, 5u);
  for (const LinearFit& f : fits) EXPECT_EQ(f.status, FitStatus::kConverged) << f.lambda;
  ExpectKkt(d, fits.back(), 1.0, 1e-3);
}

TEST(Lasso, ElasticNetKktAndAWarmStartedPath) {
  const data::Dataset d = Riboflavin();
  PathOptions o = Options(0);
  o.l1_ratio = 0.5;
  o.path_length = 5;
  o.path_min_ratio = 0.05;
  std::vector<LinearFit> fits = FitOnRanks(1, d, o);
  ASSERT_EQ(fits.size(), 5u);
  EXPECT_TRUE(fits[0].weights.empty());  // the path starts at lambda_max
  for (size_t k = 1; k < fits.size(); ++k) {
    EXPECT_LT(fits[k].lambda, fits[k - 1].lambda);
    EXPECT_EQ(fits[k].status, FitStatus::kConverged);
    ExpectKkt(d, fits[k], 0.5, 1e-3);
  }
  EXPECT_GT(fits.back().weights.size(), fits[1].weights.size());
}

data::Design Correlated(double correlation, uint32_t block_size) {
  return data::GenerateDesign({.rows = 400,
                               .cols = 240,
                               .block_size = block_size,
                               .correlation = correlation,
                               .blocks_per_row = 240 / block_size / 2,
                               .true_nonzeros = 12,
                               .noise = 0.5,
                               .seed = 11});
}

// Several ranks and several threads per rank find the same optimum as one.
TEST(Lasso, RanksAndThreadsReachTheSameObjective) {
  const data::Dataset d = Correlated(0.3, 8).data;
  PathOptions o = Options(0.05 * LassoLambdaMax(d, 1.0, true));
  o.engine.schedule.schedule_size = 16;
  o.tolerance = 1e-9;
  const double one = FitOnRanks(1, d, o)[0].last.objective;
  for (int ranks : {2, 4}) {
    LinearFit f = FitOnRanks(ranks, d, o)[0];
    std::cout << ranks << " ranks: " << f.last.rounds << " rounds\n";
    EXPECT_EQ(f.status, FitStatus::kConverged);
    EXPECT_NEAR(f.last.objective, one, 1e-8 * one) << ranks << " ranks";
  }
  o.engine.workers = 3;
  LinearFit threads = FitOnRanks(2, d, o)[0];
  EXPECT_NEAR(threads.last.objective, one, 1e-8 * one);
}

// With the dependency check on, no block ever holds two columns correlated above the threshold
// (correlations computed here, from the data).
TEST(Lasso, ScheduledBlocksHoldNoCorrelatedPair) {
  const data::Design g = Correlated(0.6, 8);
  const auto x = Columns(g.data);
  auto corr = [&](uint32_t a, uint32_t b) {
    const double n = static_cast<double>(g.data.rows());
    double sa = 0, sb = 0;
    for (size_t i = 0; i < x[a].size(); ++i) sa += x[a][i], sb += x[b][i];
    const double cov = Dot(x[a], x[b]) - sa * sb / n;
    return std::abs(cov) / std::sqrt((Dot(x[a], x[a]) - sa * sa / n) * (Dot(x[b], x[b]) - sb * sb / n));
  };
  PathOptions o = Options(0.02 * LassoLambdaMax(g.data, 1.0, true));
  o.engine.schedule.schedule_size = 16;
  std::atomic<size_t> blocks = 0, pairs = 0;  // both ranks call on_round
  o.on_round = [&](std::span<const uint32_t> block) {
    ++blocks;
    for (size_t a = 0; a < block.size(); ++a) {
      for (size_t b = 0; b < a; ++b, ++pairs) EXPECT_LE(corr(block[a], block[b]), 0.3 + 1e-6);
    }
  };
  EXPECT_EQ(FitOnRanks(2, g.data, o)[0].status, FitStatus::kConverged);
  EXPECT_GT(blocks.load(), 10u);
  EXPECT_GT(pairs.load(), blocks.load() * 10);  // the blocks were not trivially small
}

// Strongly correlated columns: updating 32 random coordinates at once from one residual
// overshoots (Shotgun's limit) and does not converge; the dependency check makes it safe.
TEST(Lasso, DependencyCheckRescuesParallelUpdatesOfCorrelatedColumns) {
  const data::Design g = Correlated(0.9, 24);
  PathOptions o = Options(0.01 * LassoLambdaMax(g.data, 1.0, true));
  o.tolerance = 1e-6;
  o.max_rounds = 3000;
  o.engine.schedule = {.order = modelpar::Order::kRandom, .schedule_size = 32, .dependency_threshold = 1};
  LinearFit shotgun = FitOnRanks(1, g.data, o)[0];
  std::cout << "random, no check: " << shotgun.last.rounds << " rounds, relative gap "
            << shotgun.last.relative_gap << "\n";
  EXPECT_NE(shotgun.status, FitStatus::kConverged);
  o.engine.schedule = {.order = modelpar::Order::kPriority, .schedule_size = 32, .dependency_threshold = 0.2};
  LinearFit safe = FitOnRanks(1, g.data, o)[0];
  std::cout << "priority with the check: " << safe.last.rounds << " rounds, relative gap "
            << safe.last.relative_gap << "\n";
  EXPECT_EQ(safe.status, FitStatus::kConverged);
  ExpectKkt(g.data, safe, 1.0, 1e-2);
}

// Riboflavin's columns are highly correlated: 8 of them updated together with a loose check blow
// up to NaN within a few hundred rounds. The fit must stop and say so at once, even when no gap
// check is due (on the full data set none is: the weights reach NaN first), not run on to the
// round limit drawing from priorities that are NaN.
TEST(Lasso, DivergenceIsReportedAtOnce) {
  const data::Dataset d = Riboflavin();
  PathOptions o = Options(0.05);
  o.tolerance = 1e-6;
  o.check_every = 200000;
  o.max_rounds = 150000;
  o.engine.schedule = {.order = modelpar::Order::kPriority, .schedule_size = 8, .dependency_threshold = 0.5};
  const LinearFit fit = FitOnRanks(1, d, o)[0];
  EXPECT_EQ(fit.status, FitStatus::kDiverged);
  EXPECT_LT(fit.last.rounds, 10000u);
}

// Stopped by the round limit between checks, the fit's figures are those of the weights it
// returns (computed here from them), not the last check's: before, a limit reached before the
// second check reported the objective at w = 0 beside weights that had moved.
TEST(Lasso, AtTheRoundLimitTheFiguresAreTheReturnedWeights) {
  const data::Dataset d = Riboflavin();
  PathOptions o = Options(0.05 * LassoLambdaMax(d, 1.0, true));
  o.check_every = 1000000;
  o.max_rounds = 40;
  o.engine.schedule = {.order = modelpar::Order::kCyclic, .schedule_size = 1, .dependency_threshold = 1};
  const LinearFit fit = FitOnRanks(1, d, o)[0];
  EXPECT_EQ(fit.status, FitStatus::kRoundLimit);
  EXPECT_EQ(fit.last.rounds, 40u);
  ASSERT_FALSE(fit.weights.empty());
  const std::vector<double> r = Residual(d, fit);
  double l1 = 0;
  for (const auto& [j, w] : fit.weights) l1 += std::abs(w);
  const double objective = Dot(r, r) / (2.0 * static_cast<double>(d.rows())) + fit.lambda * l1;
  EXPECT_NEAR(fit.last.objective, objective, 1e-9 * objective);
}

TEST(Lasso, RejectsBadOptions) {
  const data::Dataset d = Riboflavin();
  PathOptions o = Options(0.1);
  o.l1_ratio = 0;
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { FitLasso(ctx, d, o); });
  EXPECT_THAT(comm::testing::Message(errors[0]), ::testing::HasSubstr("--l1-ratio"));
}

}  // namespace
}  // namespace parasol::apps::sparse_linear
