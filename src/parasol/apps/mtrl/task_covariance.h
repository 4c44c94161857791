// The task-relationship half of MTRL: the task covariance Omega that is best for given task
// weights, and the matrices the weight half needs from it. Matrices are dense, row-major; m x m
// ones are symmetric. Weights are held task-major: row i (d values) is task i's weights.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace parasol::apps::mtrl {

// A = U diag(values) U' for a symmetric n x n matrix a: values ascending,
// vectors column j for values[j] (stored column-major, i.e. vectors[j * n + i] = U[i][j]).
// InternalError if the iteration does not converge.
struct SymmetricEigen {
  std::vector<double> values, vectors;
};
SymmetricEigen EigenDecompose(std::span<const double> a, size_t n);

// Omega = U diag(s) U' + s_rest (I - U U'): r orthonormal eigenvectors U (m x r) with their
// eigenvalues s, and one eigenvalue s_rest on the rest of the space (of dimension m - r). The
// eigenvalues, counted with multiplicity, sum to 1. A fit to m tasks of d < m features has r <= d:
// W W' has rank d, so Omega is found from the d x d matrix W'W, and any function of it costs
// O(m^2 r) instead of O(m^3).
class TaskCovariance {
 public:
  // Omega = I / m: no relationship known yet.
  static TaskCovariance Identity(size_t m);
  // The minimiser over Omega (trace 1) of tr(W Omega^-1 W') + epsilon tr(Omega^-1) for m tasks'
  // weights (m x d): (W W' + epsilon I)^1/2 over its trace (Zhang and Yeung). REQUIRES epsilon > 0
  // or W W' of full rank.
  static TaskCovariance Fit(std::span<const double> weights, size_t m, size_t d, double epsilon);

  // From a stored Omega (symmetric, m x m). InvalidArgumentError unless it is positive definite.
  static TaskCovariance FromMatrix(std::span<const double> omega, size_t m);

  size_t tasks() const { return m_; }
  std::vector<double> Omega() const;
  // Sigma = (lambda1 I + lambda2 Omega^-1)^-1, eigenvalues s / (lambda1 s + lambda2): its rows
  // [first, last) ((last - first) x m), or all of it.
  std::vector<double> SigmaRows(double lambda1, double lambda2, size_t first, size_t last) const;
  std::vector<double> Sigma(double lambda1, double lambda2) const {
    return SigmaRows(lambda1, lambda2, 0, m_);
  }
  // Rows [first, last) of Sigma V for an m x d matrix V ((last - first) x d): through U's r
  // columns, O(m r d), where the rows of Sigma would cost O((last - first) m d).
  std::vector<double> SigmaTimes(double lambda1, double lambda2, std::span<const double> v, size_t d,
                                 size_t first, size_t last) const;
  double TraceInverse() const;
  // Fit only: tr((W W' + epsilon I)^1/2); the penalty lambda2/2 (tr(W Omega^-1 W') + epsilon
  // tr(Omega^-1)) at the fitted Omega is lambda2/2 times its square.
  double trace_root() const { return trace_root_; }

 private:
  // Rows [first, last) of f(Omega) = f(s_rest) I + U diag(f(s) - f(s_rest)) U'.
  template <typename F>
  std::vector<double> Compose(F f, size_t first, size_t last) const;

  size_t m_ = 0;
  std::vector<double> values_, vectors_;  // s, and U column-major (vectors_[j * m + i] = U[i][j])
  double rest_value_ = 0;                 // s_rest (unused when r = m)
  double trace_root_ = 0;
};

// The correlations of an m x m covariance: c_ik / sqrt(c_ii c_kk).
std::vector<double> Correlation(std::span<const double> cov, size_t m);

}  // namespace parasol::apps::mtrl
