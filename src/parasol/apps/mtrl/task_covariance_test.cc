// The task covariance checked against its definitions, not against another decomposition: a fit
// Omega has trace 1 and (t Omega)^2 = W W' + epsilon I; Sigma (lambda1 Omega + lambda2 I) = Omega;
// tr(Omega^-1) is the trace of the inverse found by elimination; Sigma V is the product with
// Sigma. With fewer features than tasks (the low-rank path) and with more (the dense one), and for
// weights of lower rank still.
#include "parasol/apps/mtrl/task_covariance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace parasol::apps::mtrl {
namespace {

using Matrix = std::vector<double>;  // n x n, row-major

Matrix Multiply(const Matrix& a, const Matrix& b, size_t n) {
  Matrix c(n * n, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < n; ++k)
      for (size_t j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c;
}

double MaxDifference(const Matrix& a, const Matrix& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// tr(A^-1) by Gauss-Jordan elimination with partial pivoting.
double TraceOfInverse(Matrix a, size_t n) {
  Matrix inv(n * n, 0.0);
  for (size_t i = 0; i < n; ++i) inv[i * n + i] = 1;
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[p * n + c])) p = r;
    for (size_t j = 0; j < n; ++j) {
      std::swap(a[c * n + j], a[p * n + j]);
      std::swap(inv[c * n + j], inv[p * n + j]);
    }
    const double pivot = a[c * n + c];
    for (size_t j = 0; j < n; ++j) {
      a[c * n + j] /= pivot;
      inv[c * n + j] /= pivot;
    }
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r * n + c];
      for (size_t j = 0; j < n; ++j) {
        a[r * n + j] -= f * a[c * n + j];
        inv[r * n + j] -= f * inv[c * n + j];
      }
    }
  }
  double t = 0;
  for (size_t i = 0; i < n; ++i) t += inv[i * n + i];
  return t;
}

// m tasks' weights (m x d) of rank at most `rank`: random combinations of `rank` random tasks.
std::vector<double> Weights(size_t m, size_t d, size_t rank, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> basis(rank * d), w(m * d, 0.0);
  for (double& x : basis) x = normal(rng);
  for (size_t i = 0; i < m; ++i)
    for (size_t q = 0; q < rank; ++q) {
      const double c = normal(rng);
      for (size_t f = 0; f < d; ++f) w[i * d + f] += c * basis[q * d + f];
    }
  return w;
}

void CheckFit(size_t m, size_t d, size_t rank, double epsilon) {
  SCOPED_TRACE(testing::Message() << m << " tasks, " << d << " features, rank " << rank);
  const std::vector<double> w = Weights(m, d, rank, m * 31 + d);
  const TaskCovariance c = TaskCovariance::Fit(w, m, d, epsilon);
  ASSERT_EQ(c.tasks(), m);
  const Matrix omega = c.Omega();
  double trace = 0;
  for (size_t i = 0; i < m; ++i) trace += omega[i * m + i];
  EXPECT_NEAR(trace, 1, 1e-12);
  // (t Omega)^2 = W W' + epsilon I.
  Matrix scaled = omega;
  for (double& x : scaled) x *= c.trace_root();
  Matrix gram(m * m);
  double largest = 0;
  for (size_t i = 0; i < m; ++i)
    for (size_t k = 0; k < m; ++k) {
      double s = i == k ? epsilon : 0.0;
      for (size_t f = 0; f < d; ++f) s += w[i * d + f] * w[k * d + f];
      gram[i * m + k] = s;
      largest = std::max(largest, std::abs(s));
    }
  EXPECT_LT(MaxDifference(Multiply(scaled, scaled, m), gram), 1e-10 * largest);
  // Sigma (lambda1 Omega + lambda2 I) = Omega, and its rows are Sigma's rows.
  const double lambda1 = 0.3, lambda2 = 2;
  const Matrix sigma = c.Sigma(lambda1, lambda2);
  Matrix inner = omega;
  for (double& x : inner) x *= lambda1;
  for (size_t i = 0; i < m; ++i) inner[i * m + i] += lambda2;
  EXPECT_LT(MaxDifference(Multiply(sigma, inner, m), omega), 1e-12);
  const std::vector<double> rows = c.SigmaRows(lambda1, lambda2, 2, 5);
  EXPECT_LT(MaxDifference(rows, Matrix(sigma.begin() + 2 * m, sigma.begin() + 5 * m)), 1e-15);
  EXPECT_NEAR(c.TraceInverse(), TraceOfInverse(omega, m), 1e-7 * TraceOfInverse(omega, m));
  // Sigma V through the eigenvectors is the product with Sigma's rows.
  const size_t width = 3;
  const std::vector<double> v = Weights(m, width, width, m + 7);
  const std::vector<double> product = c.SigmaTimes(lambda1, lambda2, v, width, 2, 5);
  Matrix want(3 * width, 0.0);
  for (size_t i = 2; i < 5; ++i)
    for (size_t k = 0; k < m; ++k)
      for (size_t f = 0; f < width; ++f) want[(i - 2) * width + f] += sigma[i * m + k] * v[k * width + f];
  EXPECT_LT(MaxDifference(product, want), 1e-12);
}

TEST(TaskCovarianceTest, AFitMeetsItsDefinition) {
  CheckFit(30, 4, 4, 1e-3);    // fewer features than tasks: from the 4 x 4 matrix W'W
  CheckFit(30, 6, 2, 1e-3);    // and weights of rank 2 only
  CheckFit(8, 12, 8, 1e-3);    // more features than tasks: the 8 x 8 matrix W W'
  CheckFit(40, 28, 28, 1e-6);  // School's shape, a small epsilon
}

TEST(TaskCovarianceTest, TheIdentityIsAnEvenSplit) {
  const TaskCovariance c = TaskCovariance::Identity(5);
  const Matrix omega = c.Omega(), sigma = c.Sigma(1, 1);
  for (size_t i = 0; i < 5; ++i)
    for (size_t k = 0; k < 5; ++k) {
      EXPECT_DOUBLE_EQ(omega[i * 5 + k], i == k ? 0.2 : 0.0);
      EXPECT_DOUBLE_EQ(sigma[i * 5 + k], i == k ? 0.2 / 1.2 : 0.0);
    }
  EXPECT_DOUBLE_EQ(c.TraceInverse(), 25);
}

}  // namespace
}  // namespace parasol::apps::mtrl
