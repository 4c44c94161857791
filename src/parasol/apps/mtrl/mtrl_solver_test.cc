#include "parasol/apps/mtrl/mtrl_solver.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "parasol/apps/mtrl/task_covariance.h"
#include "parasol/apps/mtrl/task_generator.h"
#include "parasol/comm/inprocess_transport.h"
#include "parasol/comm/testing.h"
#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::apps::mtrl {
namespace {

using Matrix = std::vector<double>;  // row-major, square

std::vector<MtrlResult> TrainOnRanks(int ranks, const TaskSet& s, const MtrlOptions& o,
                                     const std::vector<comm::MessageFault>& faults = {}) {
  comm::InProcessWorld world(ranks);
  for (const comm::MessageFault& f : faults) world.AddFault(f);
  std::vector<MtrlResult> results(static_cast<size_t>(ranks));
  auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) {
    results[static_cast<size_t>(ctx.rank())] = TrainMtrl(ctx, s, nullptr, o);
  });
  comm::testing::ExpectNoErrors(errors);
  return results;
}

// --- The test's own centralised MTRL: the weight step as one linear system, solved directly. ---

// Solves A x = b for symmetric positive definite A (n x n) by Cholesky.
std::vector<double> SolveSpd(Matrix a, std::vector<double> b, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    for (size_t k = 0; k < j; ++k) a[j * n + j] -= a[j * n + k] * a[j * n + k];
    a[j * n + j] = std::sqrt(a[j * n + j]);
    for (size_t i = j + 1; i < n; ++i) {
      for (size_t k = 0; k < j; ++k) a[i * n + j] -= a[i * n + k] * a[j * n + k];
      a[i * n + j] /= a[j * n + j];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < i; ++k) b[i] -= a[i * n + k] * b[k];
    b[i] /= a[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {
    for (size_t k = i + 1; k < n; ++k) b[i] -= a[k * n + i] * b[k];
    b[i] /= a[i * n + i];
  }
  return b;
}

// f(A) for symmetric A, by cyclic Jacobi rotations.
template <typename F>
Matrix ApplyToSpectrum(Matrix a, size_t n, F f) {
  Matrix v(n * n, 0.0);
  for (size_t i = 0; i < n; ++i) v[i * n + i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    if (off < 1e-30) break;
    for (size_t p = 0; p < n; ++p) {
      for (size_t q = p + 1; q < n; ++q) {
        if (a[p * n + q] == 0) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2 * a[p * n + q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n; ++k) {  // A = A J
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n; ++k) {  // A = J' A
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (size_t k = 0; k < n; ++k) {
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  Matrix out(n * n, 0.0);
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < n; ++k) out[i * n + k] += v[i * n + j] * f(a[j * n + j]) * v[k * n + j];
  return out;
}

struct Centralised {
  Matrix w, omega;
  double objective = 0;
};

Centralised SolveCentralised(const TaskSet& s, double lambda1, double lambda2, double epsilon,
                             int iterations) {
  const size_t m = s.tasks(), d = s.features, n = m * d;
  Matrix omega(m * m, 0.0), w(m * d, 0.0);
  for (size_t i = 0; i < m; ++i) omega[i * m + i] = 1.0 / static_cast<double>(m);
  auto objective = [&]() {
    double f = 0;
    for (size_t i = 0; i < m; ++i) {
      for (uint64_t j = s.offsets[i]; j < s.offsets[i + 1]; ++j) {
        double r = s.y[j];
        for (size_t c = 0; c < d; ++c) r -= w[i * d + c] * s.row(j)[c];
        f += r * r / (2.0 * static_cast<double>(s.task_size(i)));
      }
    }
    const Matrix inv = ApplyToSpectrum(omega, m, [](double x) { return 1 / x; });
    for (size_t i = 0; i < m; ++i) {
      for (size_t k = 0; k < m; ++k) {
        double wik = 0;
        for (size_t c = 0; c < d; ++c) wik += w[i * d + c] * w[k * d + c];
        f += lambda2 / 2 * inv[i * m + k] * (wik + (i == k ? epsilon : 0.0));
        if (i == k) f += lambda1 / 2 * wik;
      }
    }
    return f;
  };
  for (int it = 0; it < iterations; ++it) {
    const Matrix inv = ApplyToSpectrum(omega, m, [](double x) { return 1 / x; });
    Matrix a(n * n, 0.0);
    std::vector<double> b(n, 0.0);
    for (size_t i = 0; i < m; ++i) {
      const auto ni = static_cast<double>(s.task_size(i));
      for (uint64_t j = s.offsets[i]; j < s.offsets[i + 1]; ++j) {
        for (size_t p = 0; p < d; ++p) {
          b[i * d + p] += s.row(j)[p] * s.y[j] / ni;
          for (size_t q = 0; q < d; ++q) a[(i * d + p) * n + i * d + q] += s.row(j)[p] * s.row(j)[q] / ni;
        }
      }
      for (size_t k = 0; k < m; ++k)
        for (size_t p = 0; p < d; ++p)
          a[(i * d + p) * n + k * d + p] += lambda2 * inv[i * m + k] + (i == k ? lambda1 : 0.0);
    }
    w = SolveSpd(a, b, n);
    Matrix gram(m * m, 0.0);
    for (size_t i = 0; i < m; ++i)
      for (size_t k = 0; k < m; ++k) {
        for (size_t c = 0; c < d; ++c) gram[i * m + k] += w[i * d + c] * w[k * d + c];
        if (i == k) gram[i * m + k] += epsilon;
      }
    omega = ApplyToSpectrum(gram, m, [](double x) { return std::sqrt(std::max(x, 0.0)); });
    double trace = 0;
    for (size_t i = 0; i < m; ++i) trace += omega[i * m + i];
    for (double& v : omega) v /= trace;
  }
  return {w, omega, objective()};
}

TaskSet SmallProblem() {
  return GenerateTasks(
             {.tasks = 6, .groups = 2, .features = 5, .samples_per_task = 12, .noise = 0.3, .seed = 3})
      .set;
}

TEST(MtrlTest, ConvergesToTheCentralisedSolution) {
  const TaskSet s = SmallProblem();
  const Centralised c = SolveCentralised(s, 0.01, 0.5, 1e-2, 1000);
  for (int ranks : {1, 3}) {
    const MtrlResult r = TrainOnRanks(
        ranks, s,
        {.lambda1 = 0.01, .lambda2 = 0.5, .epsilon = 1e-2, .iterations = 2000, .tolerance = 1e-11})[0];
    SCOPED_TRACE(ranks);
    EXPECT_TRUE(r.converged);
    EXPECT_NEAR(r.iterations.back().objective, c.objective, 1e-8 * c.objective);
    EXPECT_THAT(r.model.weights, testing::Pointwise(testing::DoubleNear(1e-4), c.w));
    EXPECT_THAT(r.model.omega, testing::Pointwise(testing::DoubleNear(1e-4), c.omega));
  }
}

TEST(MtrlTest, WithoutRelationshipsEachTaskIsRidgeRegression) {
  // lambda2 = 0: Sigma = I / lambda1, and task i's weights solve (X'X / n + lambda1 I) w = X'y / n.
  const TaskSet s = SmallProblem();
  const double lambda1 = 0.2;
  const MtrlResult r =
      TrainOnRanks(2, s, {.lambda1 = lambda1, .lambda2 = 0, .iterations = 500, .tolerance = 1e-12})[0];
  const size_t d = s.features;
  for (size_t i = 0; i < s.tasks(); ++i) {
    Matrix a(d * d, 0.0);
    std::vector<double> b(d, 0.0);
    const auto n = static_cast<double>(s.task_size(i));
    for (uint64_t j = s.offsets[i]; j < s.offsets[i + 1]; ++j)
      for (size_t p = 0; p < d; ++p) {
        b[p] += s.row(j)[p] * s.y[j] / n;
        for (size_t q = 0; q < d; ++q) a[p * d + q] += s.row(j)[p] * s.row(j)[q] / n;
      }
    for (size_t p = 0; p < d; ++p) a[p * d + p] += lambda1;
    const std::vector<double> want = SolveSpd(a, b, d);
    EXPECT_THAT(std::vector<double>(r.model.weights.begin() + static_cast<int64_t>(i * d),
                                    r.model.weights.begin() + static_cast<int64_t>((i + 1) * d)),
                testing::Pointwise(testing::DoubleNear(1e-5), want));
  }
}

TEST(MtrlTest, RanksAndConsistencyModelsReachTheSameObjective) {
  const TaskSet s = GenerateTasks({.tasks = 10, .groups = 2, .features = 6, .samples_per_task = 20}).set;
  const MtrlOptions base{.epsilon = 1e-2, .iterations = 1000, .tolerance = 1e-10};
  const double one = TrainOnRanks(1, s, base)[0].iterations.back().objective;
  for (int ranks : {2, 4}) {
    for (auto c : {ps::ConsistencySpec{.model = ps::Consistency::kBsp},
                   ps::ConsistencySpec{.model = ps::Consistency::kSsp, .staleness = 1}}) {
      MtrlOptions o = base;
      o.consistency = c;
      o.rounds = ranks == 4 ? 3 : 1;  // several rounds per Omega step, too
      const std::vector<MtrlResult> r = TrainOnRanks(ranks, s, o);
      SCOPED_TRACE(fmt::format("{} ranks, {}, {} rounds", ranks, c.ToString(), o.rounds));
      EXPECT_TRUE(r[0].converged);
      EXPECT_NEAR(r[0].iterations.back().objective, one, 1e-7 * one);
      for (const MtrlResult& other : r) EXPECT_EQ(other.model.omega, r[0].model.omega);  // one Omega
    }
  }
}

// Under BSP a round reads V as every rank left it after that round: a run whose rank 1 is slowed
// down (its messages to rank 0 held 1 ms) takes the same steps, bit for bit, as one that is not.
// (SSP(1) under the same delay does not: its reads may miss the slow rank's last change.)
TEST(MtrlTest, UnderBspADelayedRankChangesNoStep) {
  const TaskSet s = GenerateTasks({.tasks = 6, .groups = 2, .features = 5, .samples_per_task = 15}).set;
  const MtrlOptions o{.epsilon = 1e-2, .iterations = 8, .tolerance = 0};
  const std::vector<MtrlResult> plain = TrainOnRanks(2, s, o);
  const std::vector<MtrlResult> slowed =
      TrainOnRanks(2, s, o, {{.src = 1, .dst = 0, .delay_ms = std::chrono::milliseconds(1)}});
  ASSERT_EQ(plain[0].iterations.size(), slowed[0].iterations.size());
  for (size_t i = 0; i < plain[0].iterations.size(); ++i)
    EXPECT_EQ(plain[0].iterations[i].objective, slowed[0].iterations[i].objective) << "iteration " << i + 1;
  EXPECT_EQ(plain[0].model.weights, slowed[0].model.weights);
}

TEST(MtrlTest, RecoversTheGeneratorsTaskCorrelations) {
  const GeneratedTasks g = GenerateTasks(
      {.tasks = 8, .groups = 4, .features = 60, .samples_per_task = 200, .correlation = 0.7, .noise = 0.2});
  const MtrlResult r = TrainOnRanks(2, g.set, {.lambda1 = 1e-4, .lambda2 = 1e-2})[0];
  const size_t m = 8;
  const std::vector<double> got = Correlation(r.model.omega, m), want = Correlation(g.omega, m);
  double worst = 0;
  for (size_t i = 0; i < m * m; ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  EXPECT_LT(worst, 0.15);
  // Without learning it, Omega stays the identity: the check above can fail.
  MtrlOptions fixed{.lambda1 = 1e-4, .lambda2 = 1e-2, .learn_covariance = false};
  const std::vector<double> identity = Correlation(TrainOnRanks(1, g.set, fixed)[0].model.omega, m);
  double worst_fixed = 0;
  for (size_t i = 0; i < m * m; ++i) worst_fixed = std::max(worst_fixed, std::abs(identity[i] - want[i]));
  EXPECT_GT(worst_fixed, 0.5);
}

TEST(MtrlTest, AResumedRunContinuesWhereTheCheckpointLeftOff) {
  const TaskSet s = SmallProblem();
  const TestDir ckpt("mtrl_ckpt");
  const std::string dir = ckpt.string();
  MtrlOptions o{.iterations = 6, .tolerance = 0};
  const MtrlResult whole = TrainOnRanks(2, s, o)[0];
  MtrlOptions first = o;
  first.iterations = 3;
  first.checkpoint_dir = dir;
  first.checkpoint_every = 3;
  TrainOnRanks(2, s, first);
  MtrlOptions rest = o;
  rest.resume_dir = dir;
  const MtrlResult resumed = TrainOnRanks(2, s, rest)[0];
  EXPECT_EQ(resumed.first_iteration, 4u);
  ASSERT_EQ(resumed.iterations.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_NEAR(resumed.iterations[i].objective, whole.iterations[i + 3].objective,
                1e-9 * whole.iterations[i + 3].objective);
  EXPECT_THAT(resumed.model.weights, testing::Pointwise(testing::DoubleNear(1e-9), whole.model.weights));
  // A checkpoint of another problem, and a corrupt one, are refused with the file named.
  TaskSet other = s;
  other.y.pop_back();
  other.x.resize(other.x.size() - other.features);
  --other.offsets.back();
  comm::InProcessWorld world(1);
  auto errors =
      comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainMtrl(ctx, other, nullptr, rest); });
  EXPECT_THAT(comm::testing::Message(errors[0]), testing::HasSubstr("samples"));
  {
    std::fstream f(dir + "/alpha.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainMtrl(ctx, s, nullptr, rest); });
  EXPECT_THAT(comm::testing::Message(errors[0]), testing::HasSubstr("alpha.bin: checksum mismatch"));
}

// A checkpoint that cannot be written (a failed write, a full disk, a crash half-way through
// alpha.bin) ends the run with an error naming the file and leaves the previous checkpoint.
TEST(MtrlTest, AFailedCheckpointLeavesThePreviousOne) {
  const TaskSet s = SmallProblem();
  const TestDir ckpt("mtrl_faulty");
  const std::string dir = ckpt.string();
  MtrlOptions o{.iterations = 3, .tolerance = 0, .checkpoint_dir = dir, .checkpoint_every = 3};
  TrainOnRanks(1, s, o);
  MtrlOptions more = o;
  more.resume_dir = dir;
  more.iterations = 6;
  MtrlOptions resume = more;
  resume.checkpoint_dir.clear();
  comm::testing::ForEachCheckpointFault(
      "alpha.bin", 100, [&](comm::Context& ctx) { TrainMtrl(ctx, s, nullptr, more); },
      [&] {
        EXPECT_EQ(TrainOnRanks(1, s, resume)[0].first_iteration, 4u)
            << "resumed from the previous checkpoint";
      });
}

TEST(MtrlTest, RefusesBadOptionsAndUnknownTestTasks) {
  const TaskSet s = SmallProblem();
  comm::InProcessWorld world(1);
  auto fails = [&](const MtrlOptions& o, const TaskSet* test) {
    auto errors = comm::testing::RunRanks(world, [&](comm::Context& ctx) { TrainMtrl(ctx, s, test, o); });
    return errors[0] ? comm::testing::Message(errors[0]) : std::string("no error");
  };
  EXPECT_THAT(fails({.lambda1 = 0, .lambda2 = 0}, nullptr), testing::HasSubstr("not both 0"));
  EXPECT_THAT(fails({.lambda1 = std::nan("")}, nullptr), testing::HasSubstr("lambda1"));
  EXPECT_THAT(fails({.epsilon = 0}, nullptr), testing::HasSubstr("epsilon"));
  EXPECT_THAT(fails({.rounds = 0}, nullptr), testing::HasSubstr("rounds"));
  TaskSet test = s;
  test.task_ids.back() = 99;
  EXPECT_THAT(fails({}, &test), testing::HasSubstr("test task 99 has no training samples"));
}

}  // namespace
}  // namespace parasol::apps::mtrl
