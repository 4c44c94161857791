#include "parasol/apps/sparse_linear/lasso_solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"

namespace parasol::apps::sparse_linear {

namespace {

// A worker's slice of the samples: its columns and its residuals r_i - c (c is shared).
struct Shard {
  std::shared_ptr<const data::ColumnMatrix> x;
  std::vector<double> r;   // stored residual; the true one is r + offset
  std::vector<double> yc;  // centred labels
};

// Coordinate j is feature ids[j]. Replicated on every rank: the weights, the column statistics
// and the residual offset; sharded: the residuals.
class LassoProgram final : public PathProgram {
 public:
  LassoProgram(const data::Dataset& d, std::vector<uint32_t> ids, int rank, int ranks, uint32_t workers,
               bool intercept);

  void SetLambda(double lambda, double l1_ratio) override {
    l1_ = lambda * l1_ratio, l2_ = lambda * (1 - l1_ratio);
  }
  // A duality-gap check (collective): objective and gap; the scheduler's working set becomes the
  // nonzero weights and the coordinates that violate their optimality condition, each with the
  // change coordinate descent would make to it now as its priority.
  FitCheck Check(modelpar::RoundEngine& engine) override;
  LinearFit Result(double lambda) const override;
  uint32_t coordinates() const override { return static_cast<uint32_t>(ids_.size()); }
  uint32_t feature(uint32_t j) const override { return ids_[j]; }
  double null_objective() const override { return null_objective_; }
  bool finite() const override { return finite_; }
  uint64_t UpdateCost(uint32_t j) const override { return all_->col_offsets[j + 1] - all_->col_offsets[j]; }
  uint64_t CheckCost() const override { return all_->values.size() + all_->rows; }

  void Update(size_t worker, std::span<const uint32_t> block, std::span<double> out) override;
  double Dependency(uint32_t a, uint32_t b) const override;
  size_t DependencyCost(uint32_t a, uint32_t b) const override {  // a merge of the two columns
    return all_->col_offsets[a + 1] - all_->col_offsets[a] + all_->col_offsets[b + 1] - all_->col_offsets[b];
  }
  void Aggregate(std::span<const uint32_t> block, std::span<const double> sums,
                 std::span<double> deltas) override;
  void Commit(size_t worker, std::span<const uint32_t> block, std::span<const double> deltas) override;
  // A zero weight that an update left at zero rests until the next check (glmnet's active set):
  // on riboflavin the first check's working set is 1,585 coordinates, of which 24 are nonzero
  // after a sweep, and ten sweeps of all of them were 15,850 of the fit's 17,770 updates. As
  // LIBLINEAR's shrinking, only after the first sweep since the check (the generated design's
  // correlated blocks: coordinates at zero in the first sweep enter in the second), and only with
  // its gradient inside the threshold by the last sweep's largest violation over n.
  bool AtRest(uint32_t j) const override { return may_rest_[j] != 0; }

 private:
  // How far coordinate j is from its optimality condition, with xr = x_j . r (centred).
  double Violation(uint32_t j, double xr) const;
  // Counts an update of j with xr, and decides whether j may rest (may_rest_).
  void CountUpdate(uint32_t j, double xr, double updated);
  // The residuals' sums (collective), or the last check's while no update has come since.
  const std::vector<double>& ResidualSums(modelpar::RoundEngine& engine);
  double NewWeight(uint32_t j, double xr) const {  // xr: x_j . r of the centred problem
    const double denom = q_[j] + l2_;
    return denom > 0 ? SoftThreshold(xr / n_ + q_[j] * w_[j], l1_) / denom : 0.0;
  }

  std::vector<uint32_t> ids_;
  double n_;
  double mean_y_ = 0, sum_yc_ = 0, null_objective_ = 0;
  std::vector<double> col_sum_, mean_, q_;  // per coordinate: sum, mean, ||centred column||^2 / n
  std::vector<double> w_;
  double offset_ = 0;  // added to every stored residual
  bool finite_ = true;
  // The residuals' sums of the last check (X'r, r.r, sum r, r.yc), while no update has come since:
  // a path's next lambda starts from the residuals the last one ended with.
  std::vector<double> sums_;
  bool sums_current_ = false;
  double l1_ = 0, l2_ = 0;
  // Sweeps since the last check, by count (sweep_size_ updates: the working set at the check), and
  // the largest violation seen in this one and in the last (infinite in the first).
  uint64_t sweep_size_ = 1, sweep_updates_ = 0;
  double sweep_violation_ = 0, last_sweep_violation_ = std::numeric_limits<double>::infinity();
  std::vector<uint8_t> may_rest_;
  std::vector<Shard> shards_;
  std::shared_ptr<const data::ColumnMatrix> all_;  // every row: dependencies are computed without a message
};

LassoProgram::LassoProgram(const data::Dataset& d, std::vector<uint32_t> ids, int rank, int ranks,
                           uint32_t workers, bool intercept)
    : ids_(std::move(ids)), n_(static_cast<double>(d.rows())) {
  const size_t p = ids_.size();
  // Every rank holds the whole data set: column statistics and dependencies need no message.
  all_ = std::make_shared<const data::ColumnMatrix>(data::ToColumns(d, 0, d.rows(), ids_));
  col_sum_.assign(p, 0.0);
  std::vector<double> sq(p, 0.0);
  for (size_t j = 0; j < p; ++j) {
    const data::ColumnMatrix::Moments m = all_->ColumnMoments(j);
    col_sum_[j] = m.sum, sq[j] = m.squares;
  }
  mean_.assign(p, 0.0);
  q_.resize(p);
  for (size_t j = 0; j < p; ++j) {
    if (intercept) mean_[j] = col_sum_[j] / n_;
    q_[j] = std::max(0.0, sq[j] / n_ - mean_[j] * mean_[j]);
  }
  w_.assign(p, 0.0);
  may_rest_.assign(p, 0);
  for (double y : d.labels) mean_y_ += y;
  mean_y_ = intercept ? mean_y_ / n_ : 0.0;
  for (double y : d.labels) sum_yc_ += y - mean_y_, null_objective_ += (y - mean_y_) * (y - mean_y_);
  null_objective_ /= 2 * n_;
  const auto [r0, r1] = collective::BlockRange(d.rows(), ranks, rank);
  for (uint32_t k = 0; k < workers; ++k) {
    const auto [b, e] = collective::BlockRange(r1 - r0, static_cast<int>(workers), static_cast<int>(k));
    Shard s;
    s.x = data::SliceRows(all_, r0 + b, r0 + e);  // the same matrix when a shard is every row
    for (size_t i = r0 + b; i < r0 + e; ++i) s.yc.push_back(d.labels[i] - mean_y_);
    s.r = s.yc;  // w = 0
    shards_.push_back(std::move(s));
  }
}

void LassoProgram::Update(size_t worker, std::span<const uint32_t> block, std::span<double> out) {
  const Shard& s = shards_[worker];
  for (size_t k = 0; k < block.size(); ++k) out[k] = s.x->Dot(block[k], s.r);
}

double LassoProgram::Dependency(uint32_t a, uint32_t b) const {
  const double dot = all_->ColumnDot(a, b);
  const double covariance = dot - n_ * mean_[a] * mean_[b];  // of the centred columns
  const double scale = n_ * std::sqrt(q_[a] * q_[b]);
  return scale > 0 ? std::abs(covariance) / scale : 0.0;
}

void LassoProgram::Aggregate(std::span<const uint32_t> block, std::span<const double> sums,
                             std::span<double> deltas) {
  // All new values come from the same residual (the block's columns are nearly orthogonal, so
  // that is safe); then the shared offset takes the centring part of r -= delta (x_j - mean_j).
  for (size_t k = 0; k < block.size(); ++k) {
    const uint32_t j = block[k];
    const double xr = sums[k] + offset_ * col_sum_[j];
    const double updated = NewWeight(j, xr);
    CountUpdate(j, xr, updated);
    deltas[k] = updated - w_[j];
    w_[j] = updated;
    finite_ = finite_ && std::isfinite(updated);
  }
  for (size_t k = 0; k < block.size(); ++k) offset_ += deltas[k] * mean_[block[k]];
  sums_current_ = false;
}

double LassoProgram::Violation(uint32_t j, double xr) const {
  const double g = -xr / n_ + l2_ * w_[j];  // the smooth part's gradient
  if (w_[j] == 0) return std::max(std::abs(g) - l1_, 0.0);
  return std::abs(g + (w_[j] > 0 ? l1_ : -l1_));
}

void LassoProgram::CountUpdate(uint32_t j, double xr, double updated) {
  sweep_violation_ = std::max(sweep_violation_, Violation(j, xr));
  may_rest_[j] = w_[j] == 0 && updated == 0 && std::abs(xr) / n_ < l1_ - last_sweep_violation_ / n_;
  if (++sweep_updates_ < sweep_size_) return;
  last_sweep_violation_ = sweep_violation_;
  sweep_violation_ = 0;
  sweep_updates_ = 0;
}

void LassoProgram::Commit(size_t worker, std::span<const uint32_t> block, std::span<const double> deltas) {
  Shard& s = shards_[worker];
  for (size_t k = 0; k < block.size(); ++k) {
    if (deltas[k] != 0) s.x->AddTo(block[k], -deltas[k], s.r);
  }
}

const std::vector<double>& LassoProgram::ResidualSums(modelpar::RoundEngine& engine) {
  if (sums_current_) return sums_;
  const size_t p = ids_.size();
  std::vector<std::vector<double>> parts(shards_.size());
  engine.ForEachWorker([&](size_t k) {
    const Shard& s = shards_[k];
    std::vector<double>& out = parts[k];
    out.assign(p + 3, 0.0);
    s.x->TransposeProduct(s.r, std::span<double>(out).first(p));
    for (size_t i = 0; i < s.r.size(); ++i)
      out[p] += s.r[i] * s.r[i], out[p + 1] += s.r[i], out[p + 2] += s.r[i] * s.yc[i];
  });
  std::vector<double>& sums = sums_;
  sums.assign(p + 3, 0.0);
  for (const auto& part : parts) {
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += part[i];
  }
  engine.SumOverRanks(sums);
  // The shared offset c goes into the sums and the stored residuals, so that it never grows large
  // beside them: x_j.(r + c), (r + c).(r + c), sum (r + c), (r + c).yc.
  const double c = offset_;
  for (size_t j = 0; j < p; ++j) sums[j] += c * col_sum_[j];
  sums[p] += 2 * c * sums[p + 1] + n_ * c * c;
  sums[p + 1] += n_ * c;
  sums[p + 2] += c * sum_yc_;
  for (Shard& s : shards_) {
    for (double& r : s.r) r += c;
  }
  offset_ = 0;
  sums_current_ = true;
  return sums_;
}

FitCheck LassoProgram::Check(modelpar::RoundEngine& engine) {
  const size_t p = ids_.size();
  const std::vector<double>& sums = ResidualSums(engine);
  const double rr = sums[p], ry = sums[p + 2];
  double dual_norm = 0, l1_norm = 0, l2_norm = 0;
  uint64_t nonzeros = 0;
  std::vector<uint32_t> working;  // nonzero weights and the coordinates that would move now
  std::vector<double> moves;
  for (size_t j = 0; j < p; ++j) {
    const double xr = sums[j];
    dual_norm = std::max(dual_norm, std::abs(xr / n_ - l2_ * w_[j]));
    l1_norm += std::abs(w_[j]);
    l2_norm += w_[j] * w_[j];
    nonzeros += w_[j] != 0;
    // A zero weight moves only past the threshold (no division for most of the coordinates).
    const double move =
        w_[j] == 0 && std::abs(xr) <= l1_ * n_ ? 0.0 : NewWeight(static_cast<uint32_t>(j), xr) - w_[j];
    if (w_[j] != 0 || move != 0) working.push_back(static_cast<uint32_t>(j)), moves.push_back(move);
  }
  engine.scheduler().Restrict(working, moves);
  sweep_size_ = std::max<uint64_t>(working.size(), 1);
  sweep_updates_ = 0;
  sweep_violation_ = 0;
  last_sweep_violation_ = std::numeric_limits<double>::infinity();
  const double scale = dual_norm > l1_ ? l1_ / dual_norm : 1.0;
  FitCheck check;
  check.objective = rr / (2 * n_) + l1_ * l1_norm + l2_ / 2 * l2_norm;
  const double dual = scale * ry / n_ - scale * scale * (rr + n_ * l2_ * l2_norm) / (2 * n_);
  check.gap = check.objective - dual;
  check.relative_gap = null_objective_ > 0 ? check.gap / null_objective_ : check.gap;
  check.nonzeros = nonzeros;
  return check;
}

LinearFit LassoProgram::Result(double lambda) const {
  LinearFit fit;
  fit.lambda = lambda;
  fit.intercept = mean_y_;
  for (size_t j = 0; j < ids_.size(); ++j) {
    if (w_[j] == 0) continue;
    fit.weights.emplace_back(ids_[j], w_[j]);
    fit.intercept -= mean_[j] * w_[j];
  }
  return fit;
}

}  // namespace

double LassoLambdaMax(const data::Dataset& d, double l1_ratio, bool intercept) {
  double mean_y = 0;
  for (double y : d.labels) mean_y += y;
  mean_y = intercept ? mean_y / static_cast<double>(d.rows()) : 0.0;
  std::vector<double> yc(d.labels);  // x_j . (y - mean y): centring x_j changes nothing
  for (double& y : yc) y -= mean_y;
  return data::MaxAbsTransposeProduct(d, yc) / (static_cast<double>(d.rows()) * l1_ratio);
}

std::vector<LinearFit> FitLasso(comm::Context& ctx, const data::Dataset& d, const PathOptions& o) {
  CheckPathOptions(d, o);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> lambdas =
      PathLambdas(o.lambda > 0 ? 0.0 : LassoLambdaMax(d, o.l1_ratio, o.intercept), o);
  LassoProgram program(d, data::UsedFeatures(d), ctx.rank(), ctx.size(), o.engine.workers, o.intercept);
  return FitPath(ctx, program, lambdas, o, start);
}

}  // namespace parasol::apps::sparse_linear
