#include "parasol/apps/mtrl/task_covariance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "parasol/core/error.h"

extern "C" void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
                        double* w, double* work, const int* lwork, int* iwork, const int* liwork, int* info);
// Present when LAPACK is OpenBLAS's (Debian's default with libopenblas0-pthread), absent with the
// reference LAPACK: weak, so that either links.
extern "C" void openblas_set_num_threads(int threads) __attribute__((weak));

namespace parasol::apps::mtrl {

namespace {

// OpenBLAS wakes its thread pool inside dsyevd even for tiny matrices, and its threads spin: a
// 6 x 6 decomposition took milliseconds and an MPI rank's neighbours lost a core. The matrices
// here are task x task (hundreds), which one thread decomposes in milliseconds. The setting is
// the library's, for the whole process, and is left at one: restoring it would race with other
// ranks' decompositions in the same process (in-process ranks), whose results must be identical.
void UseOneBlasThread() {
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(1);
}

}  // namespace

SymmetricEigen EigenDecompose(std::span<const double> a, size_t n) {
  UseOneBlasThread();
  SymmetricEigen e{std::vector<double>(n), std::vector<double>(a.begin(), a.end())};
  if (n == 0) return e;
  const int ni = static_cast<int>(n);
  int lwork = -1, liwork = -1, info = 0, iwork_size = 0;
  double work_size = 0;
  // A symmetric matrix is the same row- or column-major.
  dsyevd_("V", "U", &ni, e.vectors.data(), &ni, e.values.data(), &work_size, &lwork, &iwork_size, &liwork,
          &info);
  if (info != 0) throw InternalError(fmt::format("LAPACK dsyevd workspace query failed ({})", info));
  lwork = static_cast<int>(work_size);
  liwork = iwork_size;
  std::vector<double> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  dsyevd_("V", "U", &ni, e.vectors.data(), &ni, e.values.data(), work.data(), &lwork, iwork.data(), &liwork,
          &info);
  if (info != 0)
    throw InternalError(fmt::format("LAPACK dsyevd failed on a {0} x {0} matrix ({1})", n, info));
  return e;
}

TaskCovariance TaskCovariance::Identity(size_t m) {
  TaskCovariance c;
  c.values_.assign(m, 1.0 / static_cast<double>(m));
  c.vectors_.assign(m * m, 0.0);
  for (size_t i = 0; i < m; ++i) c.vectors_[i * m + i] = 1;
  return c;
}

TaskCovariance TaskCovariance::Fit(std::span<const double> weights, size_t m, size_t d, double epsilon) {
  std::vector<double> gram(m * m);
  for (size_t i = 0; i < m; ++i) {
    for (size_t k = 0; k <= i; ++k) {
      double s = 0;
      for (size_t f = 0; f < d; ++f) s += weights[i * d + f] * weights[k * d + f];
      gram[i * m + k] = gram[k * m + i] = s + (i == k ? epsilon : 0.0);
    }
  }
  SymmetricEigen e = EigenDecompose(gram, m);
  TaskCovariance c;
  c.vectors_ = std::move(e.vectors);
  c.values_.resize(m);
  double total = 0;
  for (size_t j = 0; j < m; ++j) total += c.values_[j] = std::sqrt(std::max(e.values[j], 0.0));
  if (!(total > 0)) return Identity(m);  // W = 0 and epsilon = 0: nothing to learn from
  for (double& s : c.values_) s /= total;
  c.trace_root_ = total;
  return c;
}

TaskCovariance TaskCovariance::FromMatrix(std::span<const double> omega, size_t m) {
  SymmetricEigen e = EigenDecompose(omega, m);
  if (m == 0 || !(e.values[0] > 0))
    throw InvalidArgumentError("the task covariance is not positive definite");
  TaskCovariance c;
  c.values_ = std::move(e.values);
  c.vectors_ = std::move(e.vectors);
  return c;
}

double TaskCovariance::TraceInverse() const {
  double t = 0;
  for (double s : values_) t += 1 / s;
  return t;
}

template <typename F>
std::vector<double> TaskCovariance::Compose(F f) const {
  const size_t m = tasks();
  std::vector<double> out(m * m, 0.0), scaled(m);
  for (size_t j = 0; j < m; ++j) {
    const double g = f(values_[j]);
    const double* u = vectors_.data() + j * m;
    for (size_t i = 0; i < m; ++i) scaled[i] = g * u[i];
    for (size_t i = 0; i < m; ++i) {
      double* row = out.data() + i * m;
      const double ui = u[i];
      for (size_t k = 0; k < m; ++k) row[k] += scaled[k] * ui;
    }
  }
  return out;
}

std::vector<double> TaskCovariance::Omega() const {
  return Compose([](double s) { return s; });
}

std::vector<double> TaskCovariance::Sigma(double lambda1, double lambda2) const {
  return Compose([=](double s) { return s / (lambda1 * s + lambda2); });
}

std::vector<double> Correlation(std::span<const double> cov, size_t m) {
  std::vector<double> c(m * m);
  for (size_t i = 0; i < m; ++i)
    for (size_t k = 0; k < m; ++k) c[i * m + k] = cov[i * m + k] / std::sqrt(cov[i * m + i] * cov[k * m + k]);
  return c;
}

}  // namespace parasol::apps::mtrl
