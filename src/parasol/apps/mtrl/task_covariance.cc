#include "parasol/apps/mtrl/task_covariance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

#include "parasol/core/error.h"

namespace parasol::apps::mtrl {

// Eigen's solver rather than LAPACK's dsyevd: linking LAPACK brought OpenBLAS into every parasol
// process, and OpenBLAS starts a thread pool when it loads whose threads spin for about 0.1 s, on
// every command (perf: 40% of a short lasso run's samples, a core of this 2-core machine lost
// to each process). The matrices here are task x task (hundreds), one thread's milliseconds.
SymmetricEigen EigenDecompose(std::span<const double> a, size_t n) {
  SymmetricEigen e{std::vector<double>(n), std::vector<double>(n * n)};
  if (n == 0) return e;
  const auto size = static_cast<Eigen::Index>(n);
  // A symmetric matrix is the same row- or column-major.
  const Eigen::Map<const Eigen::MatrixXd> matrix(a.data(), size, size);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(matrix, Eigen::ComputeEigenvectors);
  if (solver.info() != Eigen::Success)
    throw InternalError(fmt::format("the eigen decomposition of a {0} x {0} matrix did not converge", n));
  Eigen::Map<Eigen::VectorXd>(e.values.data(), size) = solver.eigenvalues();
  Eigen::Map<Eigen::MatrixXd>(e.vectors.data(), size, size) = solver.eigenvectors();
  return e;
}

TaskCovariance TaskCovariance::Identity(size_t m) {
  TaskCovariance c;
  c.m_ = m;
  c.rest_value_ = 1.0 / static_cast<double>(m);
  return c;
}

namespace {

// W W' + epsilon I for m tasks' weights (m x d), as an eigen decomposition with values ascending.
SymmetricEigen TaskGram(std::span<const double> w, size_t m, size_t d, double epsilon) {
  std::vector<double> gram(m * m);
  for (size_t i = 0; i < m; ++i) {
    for (size_t k = 0; k <= i; ++k) {
      double s = 0;
      for (size_t f = 0; f < d; ++f) s += w[i * d + f] * w[k * d + f];
      gram[i * m + k] = gram[k * m + i] = s + (i == k ? epsilon : 0.0);
    }
  }
  return EigenDecompose(gram, m);
}

// The eigenvectors of W W' for the nonzero eigenvalues lambda of W'W (d x d): u = W v / sqrt(lambda),
// largest first, made orthonormal again (Gram-Schmidt) against rounding. Eigenvalues below
// 1e-14 of the largest are left to the rest of the space, where W W' is 0: their share of Omega
// is off by less than 1e-14 |W|^2 / sqrt(epsilon).
void LowRankEigen(std::span<const double> w, size_t m, size_t d, std::vector<double>* lambda,
                  std::vector<double>* u) {
  std::vector<double> feature_gram(d * d, 0.0);
  for (size_t i = 0; i < m; ++i) {
    const double* row = w.data() + i * d;
    for (size_t f = 0; f < d; ++f)
      for (size_t g = 0; g <= f; ++g) feature_gram[f * d + g] += row[f] * row[g];
  }
  for (size_t f = 0; f < d; ++f)
    for (size_t g = 0; g < f; ++g) feature_gram[g * d + f] = feature_gram[f * d + g];
  const SymmetricEigen e = EigenDecompose(feature_gram, d);
  const double largest = d > 0 ? e.values[d - 1] : 0;
  lambda->clear();
  u->clear();
  for (size_t j = d; j-- > 0;) {
    if (!(e.values[j] > 1e-14 * largest)) break;
    std::vector<double> col(m, 0.0);
    const double* v = e.vectors.data() + j * d;
    for (size_t i = 0; i < m; ++i)
      for (size_t f = 0; f < d; ++f) col[i] += w[i * d + f] * v[f];
    for (size_t q = 0; q < lambda->size(); ++q) {
      const double* prev = u->data() + q * m;
      double dot = 0;
      for (size_t i = 0; i < m; ++i) dot += prev[i] * col[i];
      for (size_t i = 0; i < m; ++i) col[i] -= dot * prev[i];
    }
    double norm = 0;
    for (double x : col) norm += x * x;
    norm = std::sqrt(norm);
    if (!(norm > 0)) break;
    for (double& x : col) x /= norm;
    lambda->push_back(e.values[j]);
    u->insert(u->end(), col.begin(), col.end());
  }
}

// Sigma = (lambda1 I + lambda2 Omega^-1)^-1 as a function of Omega's eigenvalues.
auto SigmaOfEigenvalue(double lambda1, double lambda2) {
  return [=](double s) { return s / (lambda1 * s + lambda2); };
}

}  // namespace

TaskCovariance TaskCovariance::Fit(std::span<const double> weights, size_t m, size_t d, double epsilon) {
  TaskCovariance c;
  c.m_ = m;
  std::vector<double> lambda;
  if (d < m && epsilon > 0) {
    LowRankEigen(weights, m, d, &lambda, &c.vectors_);
    c.rest_value_ = std::sqrt(epsilon);
  } else {
    SymmetricEigen e = TaskGram(weights, m, d, epsilon);
    lambda = std::move(e.values);
    for (double& l : lambda) l = std::max(l - epsilon, 0.0);  // the same form as the low-rank one
    c.vectors_ = std::move(e.vectors);
  }
  const size_t r = lambda.size();
  double total = static_cast<double>(m - r) * c.rest_value_;
  c.values_.resize(r);
  for (size_t j = 0; j < r; ++j) total += c.values_[j] = std::sqrt(lambda[j] + epsilon);
  if (!(total > 0)) return Identity(m);  // W = 0 and epsilon = 0: nothing to learn from
  for (double& s : c.values_) s /= total;
  c.rest_value_ /= total;
  c.trace_root_ = total;
  return c;
}

TaskCovariance TaskCovariance::FromMatrix(std::span<const double> omega, size_t m) {
  SymmetricEigen e = EigenDecompose(omega, m);
  if (m == 0 || !(e.values[0] > 0))
    throw InvalidArgumentError("the task covariance is not positive definite");
  TaskCovariance c;
  c.m_ = m;
  c.values_ = std::move(e.values);
  c.vectors_ = std::move(e.vectors);
  return c;
}

double TaskCovariance::TraceInverse() const {
  double t = values_.size() < m_ ? static_cast<double>(m_ - values_.size()) / rest_value_ : 0.0;
  for (double s : values_) t += 1 / s;
  return t;
}

template <typename F>
std::vector<double> TaskCovariance::Compose(F f, size_t first, size_t last) const {
  const size_t m = m_, r = values_.size();
  const double rest = r < m ? f(rest_value_) : 0.0;
  std::vector<double> out((last - first) * m, 0.0), scaled(m);
  for (size_t i = first; i < last; ++i) out[(i - first) * m + i] = rest;
  for (size_t j = 0; j < r; ++j) {
    const double g = f(values_[j]) - rest;
    const double* u = vectors_.data() + j * m;
    for (size_t k = 0; k < m; ++k) scaled[k] = g * u[k];
    for (size_t i = first; i < last; ++i) {
      double* row = out.data() + (i - first) * m;
      const double ui = u[i];
      for (size_t k = 0; k < m; ++k) row[k] += scaled[k] * ui;
    }
  }
  return out;
}

std::vector<double> TaskCovariance::Omega() const {
  return Compose([](double s) { return s; }, 0, m_);
}

std::vector<double> TaskCovariance::SigmaRows(double lambda1, double lambda2, size_t first,
                                              size_t last) const {
  return Compose(SigmaOfEigenvalue(lambda1, lambda2), first, last);
}

std::vector<double> TaskCovariance::SigmaTimes(double lambda1, double lambda2, std::span<const double> v,
                                               size_t d, size_t first, size_t last) const {
  const auto f = SigmaOfEigenvalue(lambda1, lambda2);
  const size_t m = m_, r = values_.size();
  const double rest = r < m ? f(rest_value_) : 0.0;
  std::vector<double> out((last - first) * d), projected(d);
  for (size_t i = first; i < last; ++i)
    for (size_t c = 0; c < d; ++c) out[(i - first) * d + c] = rest * v[i * d + c];
  for (size_t j = 0; j < r; ++j) {
    const double g = f(values_[j]) - rest;
    const double* u = vectors_.data() + j * m;
    std::fill(projected.begin(), projected.end(), 0.0);  // u_j' V
    for (size_t k = 0; k < m; ++k)
      for (size_t c = 0; c < d; ++c) projected[c] += u[k] * v[k * d + c];
    for (size_t i = first; i < last; ++i) {
      const double scale = g * u[i];
      for (size_t c = 0; c < d; ++c) out[(i - first) * d + c] += scale * projected[c];
    }
  }
  return out;
}

std::vector<double> Correlation(std::span<const double> cov, size_t m) {
  std::vector<double> c(m * m);
  for (size_t i = 0; i < m; ++i)
    for (size_t k = 0; k < m; ++k) c[i * m + k] = cov[i * m + k] / std::sqrt(cov[i * m + i] * cov[k * m + k]);
  return c;
}

}  // namespace parasol::apps::mtrl
