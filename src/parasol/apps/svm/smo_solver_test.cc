#include "parasol/apps/svm/smo_solver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "parasol/apps/svm/svm_model.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/data/libsvm_reader.h"

namespace parasol::apps::svm {
namespace {

struct Problem {
  data::Dataset d;
  std::vector<int8_t> y;
};

Problem Adult() {
  Problem p{data::ReadLibsvm(std::string(PARASOL_DATA_DIR) + "/libsvm/a9a-2000"), {}};
  const std::vector<double> labels = ClassOrder(p.d);
  for (double l : p.d.labels) p.y.push_back(l == labels[0] ? 1 : -1);
  return p;
}

SmoResult SolveOnRanks(int ranks, const Problem& p, const KernelParams& kp, const SmoOptions& o) {
  const KernelMatrix k(p.d, kp);
  comm::InProcessWorld world(ranks);
  std::vector<SmoResult> results(static_cast<size_t>(ranks));
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    results[static_cast<size_t>(ctx.rank())] = SolveSmo(ctx, k, p.y, o);
  });
  comm::testing::ExpectNoErrors(errors);
  for (const SmoResult& r : results) EXPECT_EQ(r.alpha, results[0].alpha) << "ranks disagree";
  return results[0];
}

// The test's own RBF kernel: a merge of two sparse rows.
double Rbf(const data::Dataset& d, size_t a, size_t b, double gamma) {
  auto ia = d.row_indices(a), ib = d.row_indices(b);
  auto va = d.row_values(a), vb = d.row_values(b);
  double dist = 0;
  size_t p = 0, q = 0;
  while (p < ia.size() || q < ib.size()) {
    if (q == ib.size() || (p < ia.size() && ia[p] < ib[q])) {
      dist += va[p] * va[p];
      ++p;
    } else if (p == ia.size() || ib[q] < ia[p]) {
      dist += vb[q] * vb[q];
      ++q;
    } else {
      dist += (va[p] - vb[q]) * (va[p] - vb[q]);
      ++p, ++q;
    }
  }
  return std::exp(-gamma * dist);
}

// Checks the dual's optimality conditions from scratch: the gradient G = Qa - e recomputed in
// double, then max over I_up of -y G + max over I_low of y G (the violation SMO stops on).
double Violation(const Problem& p, const SmoResult& r, double c, double gamma) {
  const size_t n = p.d.rows();
  double up = -1e300, low = -1e300;
  for (size_t t = 0; t < n; ++t) {
    double g = -1;
    for (size_t s = 0; s < n; ++s)
      if (r.alpha[s] > 0) g += p.y[t] * p.y[s] * r.alpha[s] * Rbf(p.d, t, s, gamma);
    const bool at_c = r.alpha[t] >= c, at_0 = r.alpha[t] <= 0;
    if (p.y[t] > 0 ? !at_c : !at_0) up = std::max(up, -p.y[t] * g);
    if (p.y[t] > 0 ? !at_0 : !at_c) low = std::max(low, p.y[t] * g);
  }
  return up + low;
}

TEST(SmoSolverTest, TwoPointsHaveTheTextbookSolution) {
  // x = 1 (class +1) and x = -1 (class -1), linear kernel: the margin is w = 1, b = 0, reached
  // with a = 1/2 each when C allows it; with C = 0.1 both stop at C.
  Problem p;
  p.d.cols = 1;
  const uint32_t id[] = {0};
  const double plus[] = {1}, minus[] = {-1};
  p.d.AddRow(1, id, plus);
  p.d.AddRow(-1, id, minus);
  p.y = {1, -1};
  const KernelParams linear{.type = KernelType::kLinear};
  SmoResult wide = SolveOnRanks(1, p, linear, {.c = 10, .tolerance = 1e-9});
  EXPECT_THAT(wide.alpha,
              testing::ElementsAre(testing::DoubleNear(0.5, 1e-12), testing::DoubleNear(0.5, 1e-12)));
  EXPECT_NEAR(wide.objective, -0.5, 1e-12);
  EXPECT_NEAR(wide.rho, 0, 1e-12);
  SmoResult narrow = SolveOnRanks(2, p, linear, {.c = 0.1, .tolerance = 1e-9});
  EXPECT_THAT(narrow.alpha, testing::ElementsAre(0.1, 0.1));
  EXPECT_NEAR(narrow.objective, 0.5 * 0.04 - 0.2, 1e-12);
  EXPECT_NEAR(narrow.rho, 0, 1e-12);
}

TEST(SmoSolverTest, TheSolutionSatisfiesTheOptimalityConditions) {
  const Problem p = Adult();
  const double c = 1, gamma = 0.05;
  const SmoResult r = SolveOnRanks(1, p, {.type = KernelType::kRbf, .gamma = gamma},
                                   {.c = c, .tolerance = 1e-3, .elimination = Elimination::kEarliest});
  EXPECT_FALSE(r.iteration_limit);
  double balance = 0;
  for (size_t t = 0; t < r.alpha.size(); ++t) {
    ASSERT_GE(r.alpha[t], 0);
    ASSERT_LE(r.alpha[t], c);
    balance += p.y[t] * r.alpha[t];
  }
  EXPECT_NEAR(balance, 0, 1e-9);
  // The solver's gradient carries the cache's float rounding: allow a little over its tolerance.
  EXPECT_LT(Violation(p, r, c, gamma), 1.1e-3);
  EXPECT_GT(r.eliminations, 0u) << "no sample was eliminated";
  EXPECT_GT(r.reconstructions, 0u);
}

TEST(SmoSolverTest, EliminationPoliciesReachTheSameObjective) {
  const Problem p = Adult();
  const KernelParams kp{.type = KernelType::kRbf, .gamma = 0.05};
  const SmoResult none =
      SolveOnRanks(1, p, kp, {.c = 1, .tolerance = 1e-5, .elimination = Elimination::kNone});
  EXPECT_EQ(none.eliminations, 0u);
  // Samples leave under the earliest policy (the others test less often than this set needs).
  EXPECT_GT(
      SolveOnRanks(1, p, kp, {.c = 1, .tolerance = 1e-5, .elimination = Elimination::kEarliest}).eliminations,
      0u);
  for (Elimination e : {Elimination::kEarliest, Elimination::kStandard, Elimination::kLazy}) {
    const SmoResult r = SolveOnRanks(1, p, kp, {.c = 1, .tolerance = 1e-5, .elimination = e});
    EXPECT_NEAR(r.objective, none.objective, 1e-6 * std::abs(none.objective)) << EliminationName(e);
    EXPECT_NEAR(r.rho, none.rho, 1e-4) << EliminationName(e);
    EXPECT_EQ(r.eliminations > 0, r.reconstructions > 0) << EliminationName(e);
  }
}

TEST(SmoSolverTest, AnyNumberOfRanksTakesTheSameSteps) {
  const Problem p = Adult();
  const KernelParams kp{.type = KernelType::kRbf, .gamma = 0.05};
  for (Elimination e : {Elimination::kNone, Elimination::kEarliest}) {
    // A cache of a few columns makes the ranks evict and recompute at different times.
    const SmoOptions o{.c = 2, .tolerance = 1e-3, .cache_bytes = 20'000, .elimination = e};
    const SmoResult one = SolveOnRanks(1, p, kp, o);
    for (int ranks : {2, 3}) {
      const SmoResult many = SolveOnRanks(ranks, p, kp, o);
      EXPECT_EQ(many.alpha, one.alpha) << ranks << " ranks, " << EliminationName(e);
      EXPECT_EQ(many.iterations, one.iterations);
      EXPECT_NEAR(many.rho, one.rho, 1e-12);
      EXPECT_NEAR(many.objective, one.objective, 1e-9 * std::abs(one.objective));
    }
  }
}

TEST(SmoSolverTest, ProgressIsReportedOnEveryRankAlike) {
  const Problem p = Adult();
  const KernelMatrix k(p.d, {.type = KernelType::kRbf, .gamma = 0.05});
  comm::InProcessWorld world(2);
  std::vector<std::vector<SmoProgress>> seen(2);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    SmoOptions o{.c = 1, .progress_every = 100};
    o.on_progress = [&](const SmoProgress& pr) { seen[static_cast<size_t>(ctx.rank())].push_back(pr); };
    SolveSmo(ctx, k, p.y, o);
  });
  comm::testing::ExpectNoErrors(errors);
  ASSERT_GE(seen[0].size(), 3u);
  ASSERT_EQ(seen[0].size(), seen[1].size());
  for (size_t k2 = 0; k2 < seen[0].size(); ++k2) {
    EXPECT_EQ(seen[0][k2].iteration, seen[1][k2].iteration);
    EXPECT_EQ(seen[0][k2].active, seen[1][k2].active);
    EXPECT_LE(seen[0][k2].active, p.d.rows());
  }
  EXPECT_LT(seen[0].back().violation, 1e-3);
  EXPECT_EQ(seen[0].back().active, p.d.rows());
}

TEST(SmoSolverTest, BadInputsAreRejected) {
  Problem p = Adult();
  const KernelMatrix k(p.d, {.type = KernelType::kRbf, .gamma = 0.05});
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    EXPECT_THROW(SolveSmo(ctx, k, p.y, {.c = 0}), InvalidArgumentError);
    std::vector<int8_t> one_class(p.y.size(), 1);
    EXPECT_THROW(SolveSmo(ctx, k, one_class, {}), InvalidArgumentError);
  });
  comm::testing::ExpectNoErrors(errors);
  data::Dataset one = p.d;
  std::fill(one.labels.begin(), one.labels.end(), 1.0);
  EXPECT_THROW(ClassOrder(one), InvalidArgumentError);
}

}  // namespace
}  // namespace parasol::apps::svm
