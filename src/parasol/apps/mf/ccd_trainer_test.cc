#include "parasol/apps/mf/ccd_trainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"

namespace parasol::apps::mf {
namespace {

CcdResult TrainOnRanks(int ranks, const RatingSet& data, const CcdOptions& o) {
  comm::InProcessWorld world(ranks);
  std::vector<CcdResult> results(static_cast<size_t>(ranks));
  auto errors = comm::testing::RunRanks(
      world, [&](comm::Context& ctx) { results[static_cast<size_t>(ctx.rank())] = TrainCcd(ctx, data, o); });
  comm::testing::ExpectNoErrors(errors);
  return results[0];
}

// The objective of the returned factors, computed here.
double Objective(const RatingSet& data, const CcdResult& r, uint32_t rank, double lambda) {
  double sum = 0;
  for (const Rating& x : data.ratings) {
    double pred = r.mean;
    for (uint32_t k = 0; k < rank; ++k)
      pred += r.user_factors[k * data.num_users + x.user] * r.item_factors[k * data.num_items + x.item];
    sum += (x.value - pred) * (x.value - pred);
  }
  for (double w : r.user_factors) sum += lambda * w * w;
  for (double h : r.item_factors) sum += lambda * h * h;
  return sum / static_cast<double>(data.ratings.size());
}

TEST(Ccd, NeverIncreasesTheObjectiveAndReportsItExactly) {
  const RatingSet data =
      SyntheticRatings({.users = 300, .items = 400, .ratings = 20000, .rank = 6, .seed = 3});
  CcdOptions o{.rank = 6, .lambda = 0.05f, .iterations = 8};
  const CcdResult r = TrainOnRanks(1, data, o);
  ASSERT_EQ(r.iterations.size(), 9u);
  for (size_t t = 1; t < r.iterations.size(); ++t) {
    EXPECT_LE(r.iterations[t].objective, r.iterations[t - 1].objective * (1 + 1e-12)) << "iteration " << t;
  }
  EXPECT_LT(r.iterations.back().objective, 0.5 * r.iterations[0].objective);
  EXPECT_NEAR(r.iterations.back().objective, Objective(data, r, o.rank, o.lambda),
              1e-9 * r.iterations.back().objective);
}

// Each value is computed from the same numbers in the same order on any layout: bitwise equal.
TEST(Ccd, RanksAndThreadsGiveTheSameFactors) {
  const RatingSet data = SyntheticRatings({.users = 101, .items = 77, .ratings = 3000, .rank = 4, .seed = 8});
  CcdOptions o{.rank = 4, .iterations = 3, .inner = 2};
  const CcdResult one = TrainOnRanks(1, data, o);
  for (auto [ranks, threads] : {std::pair{2, 1u}, {3, 2u}, {4, 3u}}) {
    o.threads = threads;
    const CcdResult many = TrainOnRanks(ranks, data, o);
    EXPECT_EQ(many.user_factors, one.user_factors) << ranks << " ranks x " << threads << " threads";
    EXPECT_EQ(many.item_factors, one.item_factors) << ranks << " ranks x " << threads << " threads";
    EXPECT_NEAR(many.iterations.back().objective, one.iterations.back().objective,
                1e-12 * one.iterations.back().objective);
  }
}

// A fully observed matrix mean + U diag(s) V' with orthonormal U, V whose columns are orthogonal
// to the ones (so the low-rank part has mean 0): without regularisation the best rank-2 fit
// leaves the two smallest singular values, s3^2 + s4^2 over the entries (Eckart-Young).
TEST(Ccd, FullMatrixReachesTheTruncatedSvd) {
  const size_t m = 30, n = 20;
  const std::vector<double> s{5, 3, 1, 0.5};
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  auto orthonormal = [&](size_t len) {  // Gram-Schmidt from the ones vector, which is dropped
    std::vector<std::vector<double>> q{std::vector<double>(len, 1 / std::sqrt(double(len)))};
    while (q.size() < s.size() + 1) {
      std::vector<double> v(len);
      for (double& x : v) x = normal(rng);
      for (const auto& u : q) {
        double dot = 0;
        for (size_t i = 0; i < len; ++i) dot += u[i] * v[i];
        for (size_t i = 0; i < len; ++i) v[i] -= dot * u[i];
      }
      double norm = 0;
      for (double x : v) norm += x * x;
      for (double& x : v) x /= std::sqrt(norm);
      q.push_back(v);
    }
    q.erase(q.begin());
    return q;
  };
  const auto u = orthonormal(m), v = orthonormal(n);
  RatingSet data;
  data.num_users = m;
  data.num_items = n;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double r = 3;
      for (size_t k = 0; k < s.size(); ++k) r += s[k] * u[k][i] * v[k][j];
      data.ratings.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j), static_cast<float>(r)});
    }
  }
  // Ratings are floats: the optimum is taken from the data as stored, relative to float rounding.
  const CcdResult r = TrainOnRanks(2, data, {.rank = 2, .lambda = 0, .iterations = 60});
  const double best = (s[2] * s[2] + s[3] * s[3]) / static_cast<double>(m * n);
  EXPECT_NEAR(r.iterations.back().objective, best, 1e-5 * best);
}

TEST(Ccd, RejectsNoRatingsAndZeroRank) {
  comm::InProcessWorld world(1);
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainCcd(ctx, RatingSet{}, {}); });
  EXPECT_THAT(comm::testing::Message(errors[0]), ::testing::HasSubstr("no ratings"));
  const RatingSet data = SyntheticRatings({.users = 10, .items = 10, .ratings = 50, .rank = 2});
  errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainCcd(ctx, data, {.rank = 0}); });
  EXPECT_THAT(comm::testing::Message(errors[0]), ::testing::HasSubstr("must be >= 1"));
}

}  // namespace
}  // namespace parasol::apps::mf
