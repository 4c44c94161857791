#include "parasol/apps/sparse_linear/logistic_solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"

namespace parasol::apps::sparse_linear {

namespace {

double Sigmoid(double z) {
  if (z >= 0) return 1 / (1 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1 + e);
}
double LogOnePlusExp(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }
double Entropy(double t) { return t <= 0 || t >= 1 ? 0.0 : -t * std::log(t) - (1 - t) * std::log1p(-t); }

// A worker's slice of the samples: its columns, labels and margins x_i.w + b; and, frozen at the
// last check (the anchor), each sample's margin there and theta_i = sigmoid(-y_i margin_i), the
// slope of its loss (and the dual variable of the check).
struct Shard {
  std::shared_ptr<const data::ColumnMatrix> x;
  std::vector<double> y, margin, anchor_margin, theta;
};

// Coordinate j < p is feature ids[j]; coordinate p is the intercept. Replicated on every rank:
// the weights and column statistics; sharded: the margins.
//
// As LIBLINEAR's newGLMNET: between two checks the coordinates minimise the quadratic model of the
// loss at the anchor (the weights of the last check: its gradient, and its curvature theta (1 -
// theta) per sample, frozen), so an update moves margins and computes no exponential; a check
// then searches along the step the model took (1, 1/2, 1/4, ... of it, the first whose objective
// is no higher than the anchor's), recomputes the thetas and makes the result the next anchor.
// Before, every update recomputed the sigmoid of each sample in its column (a profile of a9a:
// exp 36%, the margin updates 31%).
class LogisticProgram final : public PathProgram {
 public:
  LogisticProgram(const data::Dataset& d, const std::vector<double>& y, std::vector<uint32_t> ids, int rank,
                  int ranks, uint32_t workers, bool intercept);

  void SetLambda(double lambda, double l1_ratio) override {
    l1_ = lambda * l1_ratio, l2_ = lambda * (1 - l1_ratio);
    bounded_ = false;
    last_objective_ = std::numeric_limits<double>::infinity();
    // Today's weights are the anchor; its objective under the new lambda comes at the next check.
    anchor_w_ = w_;
    anchor_objective_ = std::numeric_limits<double>::quiet_NaN();
    for (Shard& s : shards_) s.anchor_margin = s.margin;
  }
  FitCheck Check(modelpar::RoundEngine& engine) override;
  LinearFit Result(double lambda) const override;
  uint32_t coordinates() const override { return p_ + (intercept_ ? 1 : 0); }
  uint32_t feature(uint32_t j) const override { return j < p_ ? ids_[j] : kNoFeature; }
  double null_objective() const override { return null_objective_; }
  bool finite() const override { return finite_; }
  uint64_t UpdateCost(uint32_t j) const override {  // the intercept's: every row
    return j == p_ ? all_->rows : all_->col_offsets[j + 1] - all_->col_offsets[j];
  }
  uint64_t CheckCost() const override { return all_->values.size() + all_->rows; }

  size_t partials_per_coordinate() const override { return 2; }
  void Update(size_t worker, std::span<const uint32_t> block, std::span<double> out) override;
  double Dependency(uint32_t a, uint32_t b) const override;
  size_t DependencyCost(uint32_t a, uint32_t b) const override {  // a merge of the two columns
    if (a == p_ || b == p_) return 1;                             // from the column sums
    return all_->col_offsets[a + 1] - all_->col_offsets[a] + all_->col_offsets[b + 1] - all_->col_offsets[b];
  }
  void Aggregate(std::span<const uint32_t> block, std::span<const double> sums,
                 std::span<double> deltas) override;
  void Commit(size_t worker, std::span<const uint32_t> block, std::span<const double> deltas) override;

 private:
  // The proximal Newton step of coordinate j from the loss's mean gradient g and curvature h.
  double Move(uint32_t j, double g, double h) const;
  // Margins and thetas recomputed from the weights, which become the shard's anchor.
  void RecomputeMargins(Shard& s) const;
  // The objective at anchor + beta (w - anchor), whose margins lie on the line between the
  // anchor's and today's. Collective.
  double ObjectiveAlongStep(modelpar::RoundEngine& engine, double beta) const;
  // newGLMNET's line search (above); w_ ends on the point it accepts. Collective.
  void LineSearch(modelpar::RoundEngine& engine);

  std::vector<uint32_t> ids_;
  uint32_t p_;
  bool intercept_;
  double n_;
  std::vector<double> col_sum_, sq_;  // per feature: sum and sum of squares of its column
  std::vector<double> w_;             // per coordinate, the intercept last
  double null_objective_ = 0;
  double l1_ = 0, l2_ = 0;
  bool finite_ = true;
  // Should the line search find no decrease (or a check an objective higher than the last), the
  // model takes the curvature's bound (1/4 a sample), a majoriser of the loss, whose steps cannot
  // increase it, for the rest of this lambda.
  bool bounded_ = false;
  double last_objective_ = std::numeric_limits<double>::infinity();
  std::vector<double> anchor_w_;                                        // the weights at the anchor
  double anchor_objective_ = std::numeric_limits<double>::quiet_NaN();  // NaN: not computed yet
  std::vector<Shard> shards_;
  std::shared_ptr<const data::ColumnMatrix> all_;  // every row: dependencies are computed without a message
};

LogisticProgram::LogisticProgram(const data::Dataset& d, const std::vector<double>& y,
                                 std::vector<uint32_t> ids, int rank, int ranks, uint32_t workers,
                                 bool intercept)
    : ids_(std::move(ids)),
      p_(static_cast<uint32_t>(ids_.size())),
      intercept_(intercept),
      n_(static_cast<double>(d.rows())) {
  all_ = std::make_shared<const data::ColumnMatrix>(data::ToColumns(d, 0, d.rows(), ids_));
  col_sum_.assign(p_, 0.0);
  sq_.assign(p_, 0.0);
  for (size_t j = 0; j < p_; ++j) {
    for (uint64_t e = all_->col_offsets[j]; e < all_->col_offsets[j + 1]; ++e) {
      col_sum_[j] += all_->values[e];
      sq_[j] += all_->values[e] * all_->values[e];
    }
  }
  double positives = 0;
  for (double v : y) positives += v > 0;
  const double b0 = intercept ? std::log(positives / (n_ - positives)) : 0.0;
  null_objective_ = intercept ? Entropy(positives / n_) : std::log(2.0);
  w_.assign(coordinates(), 0.0);
  if (intercept) w_[p_] = b0;
  const auto [r0, r1] = collective::BlockRange(d.rows(), ranks, rank);
  for (uint32_t k = 0; k < workers; ++k) {
    const auto [b, e] = collective::BlockRange(r1 - r0, static_cast<int>(workers), static_cast<int>(k));
    Shard s;
    s.x = data::SliceRows(all_, r0 + b, r0 + e);  // the same matrix when a shard is every row
    s.y.assign(y.begin() + static_cast<ptrdiff_t>(r0 + b), y.begin() + static_cast<ptrdiff_t>(r0 + e));
    RecomputeMargins(s);
    shards_.push_back(std::move(s));
  }
  anchor_w_ = w_;
}

void LogisticProgram::RecomputeMargins(Shard& s) const {
  s.margin.assign(s.y.size(), intercept_ ? w_[p_] : 0.0);
  for (size_t j = 0; j < p_; ++j) {
    if (w_[j] == 0) continue;
    for (uint64_t e = s.x->col_offsets[j]; e < s.x->col_offsets[j + 1]; ++e)
      s.margin[s.x->row_ids[e]] += w_[j] * s.x->values[e];
  }
  s.theta.resize(s.y.size());
  for (size_t i = 0; i < s.y.size(); ++i) s.theta[i] = Sigmoid(-s.y[i] * s.margin[i]);
  s.anchor_margin = s.margin;
}

double LogisticProgram::ObjectiveAlongStep(modelpar::RoundEngine& engine, double beta) const {
  std::vector<double> loss(shards_.size(), 0.0);
  engine.ForEachWorker([&](size_t k) {
    const Shard& s = shards_[k];
    for (size_t i = 0; i < s.y.size(); ++i) {
      const double m = s.anchor_margin[i] + beta * (s.margin[i] - s.anchor_margin[i]);
      loss[k] += LogOnePlusExp(-s.y[i] * m);
    }
  });
  std::vector<double> total{0.0};
  for (double l : loss) total[0] += l;
  engine.SumOverRanks(total);
  double l1_norm = 0, l2_norm = 0;
  for (uint32_t j = 0; j < p_; ++j) {
    const double w = anchor_w_[j] + beta * (w_[j] - anchor_w_[j]);
    l1_norm += std::abs(w), l2_norm += w * w;
  }
  return total[0] / n_ + l1_ * l1_norm + l2_ / 2 * l2_norm;
}

void LogisticProgram::LineSearch(modelpar::RoundEngine& engine) {
  if (std::isnan(anchor_objective_)) anchor_objective_ = ObjectiveAlongStep(engine, 0);
  if (w_ == anchor_w_ || !std::isfinite(anchor_objective_)) return;
  constexpr int kHalvings = 20;
  double beta = 1;
  int t = 0;
  // Every rank sums the same losses, so every rank takes the same beta.
  for (; t < kHalvings; ++t, beta /= 2) {
    const double f = ObjectiveAlongStep(engine, beta);
    if (std::isfinite(f) && f <= anchor_objective_ + 1e-12 * std::abs(anchor_objective_)) break;
  }
  if (t == kHalvings) beta = 0, bounded_ = true;  // no decrease along the step: back to the anchor
  if (beta == 1) return;
  for (size_t j = 0; j < w_.size(); ++j) w_[j] = anchor_w_[j] + beta * (w_[j] - anchor_w_[j]);
}

// The quadratic model's gradient and curvature of a coordinate: at the anchor, g = -x y theta
// and h = x^2 theta (1 - theta) summed over the samples; away from it g grows by the curvature
// times the margin's move since the anchor.
void LogisticProgram::Update(size_t worker, std::span<const uint32_t> block, std::span<double> out) {
  const Shard& s = shards_[worker];
  auto curvature = [&](size_t i) { return bounded_ ? 0.25 : s.theta[i] * (1 - s.theta[i]); };
  for (size_t k = 0; k < block.size(); ++k) {
    double g = 0, h = 0;
    if (block[k] == p_) {  // the intercept: a column of ones
      for (size_t i = 0; i < s.y.size(); ++i) {
        const double d = curvature(i);
        g += d * (s.margin[i] - s.anchor_margin[i]) - s.y[i] * s.theta[i];
        h += d;
      }
    } else {
      for (uint64_t e = s.x->col_offsets[block[k]]; e < s.x->col_offsets[block[k] + 1]; ++e) {
        const uint32_t i = s.x->row_ids[e];
        const double x = s.x->values[e], d = curvature(i);
        g += x * (d * (s.margin[i] - s.anchor_margin[i]) - s.y[i] * s.theta[i]);
        h += x * x * d;
      }
    }
    out[2 * k] = g;
    out[2 * k + 1] = h;
  }
}

double LogisticProgram::Dependency(uint32_t a, uint32_t b) const {
  if (a == p_ || b == p_) {  // cosine with the column of ones
    const uint32_t j = a == p_ ? b : a;
    return j == p_ || sq_[j] == 0 ? 0.0 : std::abs(col_sum_[j]) / std::sqrt(n_ * sq_[j]);
  }
  const double dot = all_->ColumnDot(a, b);
  const double scale = std::sqrt(sq_[a] * sq_[b]);
  return scale > 0 ? std::abs(dot) / scale : 0.0;
}

double LogisticProgram::Move(uint32_t j, double g, double h) const {
  const double bound = j == p_ ? 0.25 : 0.25 * sq_[j] / n_;
  // A curvature that underflowed (separable samples) would make the step explode.
  h = bounded_ ? bound : std::max(h, 1e-6 * bound);
  if (j == p_) return h > 0 ? -g / h : 0.0;
  const double hl = h + l2_;
  return hl > 0 ? SoftThreshold(hl * w_[j] - (g + l2_ * w_[j]), l1_) / hl - w_[j] : 0.0;
}

void LogisticProgram::Aggregate(std::span<const uint32_t> block, std::span<const double> sums,
                                std::span<double> deltas) {
  for (size_t k = 0; k < block.size(); ++k) {
    const uint32_t j = block[k];
    deltas[k] = Move(j, sums[2 * k] / n_, sums[2 * k + 1] / n_);
    w_[j] += deltas[k];
    finite_ = finite_ && std::isfinite(w_[j]);
  }
}

void LogisticProgram::Commit(size_t worker, std::span<const uint32_t> block, std::span<const double> deltas) {
  Shard& s = shards_[worker];
  for (size_t k = 0; k < block.size(); ++k) {
    const double d = deltas[k];
    if (d == 0) continue;
    if (block[k] == p_) {
      for (double& m : s.margin) m += d;
      continue;
    }
    for (uint64_t e = s.x->col_offsets[block[k]]; e < s.x->col_offsets[block[k] + 1]; ++e)
      s.margin[s.x->row_ids[e]] += d * s.x->values[e];
  }
}

FitCheck LogisticProgram::Check(modelpar::RoundEngine& engine) {
  // Per feature: sum of x theta over the positive samples, over the negative ones, and of
  // x^2 theta (1 - theta); then the loss, theta's sums by class and the intercept's curvature.
  const size_t p = p_;
  LineSearch(engine);
  std::vector<std::vector<double>> parts(shards_.size());
  engine.ForEachWorker([&](size_t k) {
    Shard& s = shards_[k];
    RecomputeMargins(s);
    std::vector<double>& out = parts[k];
    out.assign(3 * p + 4, 0.0);
    for (size_t j = 0; j < p; ++j) {
      for (uint64_t e = s.x->col_offsets[j]; e < s.x->col_offsets[j + 1]; ++e) {
        const uint32_t i = s.x->row_ids[e];
        const double x = s.x->values[e], t = s.theta[i];
        out[3 * j + (s.y[i] > 0 ? 0 : 1)] += x * t;
        out[3 * j + 2] += x * x * t * (1 - t);
      }
    }
    for (size_t i = 0; i < s.y.size(); ++i) {
      out[3 * p] += LogOnePlusExp(-s.y[i] * s.margin[i]);
      out[3 * p + (s.y[i] > 0 ? 1 : 2)] += s.theta[i];
      out[3 * p + 3] += s.theta[i] * (1 - s.theta[i]);
    }
  });
  std::vector<double> sums(3 * p + 4, 0.0);
  for (const auto& part : parts) {
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += part[i];
  }
  engine.SumOverRanks(sums);
  // The dual point: theta, its classes scaled to equal sums when there is an intercept (its
  // constraint sum y theta = 0), then scaled into |X'(y theta)| / n <= l1 when l2 is 0.
  const double pos = sums[3 * p + 1], neg = sums[3 * p + 2];
  const double least = std::min(pos, neg);
  const double c_pos = !intercept_ ? 1.0 : (pos > 0 ? least / pos : 0.0);
  const double c_neg = !intercept_ ? 1.0 : (neg > 0 ? least / neg : 0.0);
  double l1_norm = 0, l2_norm = 0, most = 0, excess = 0;
  uint64_t nonzeros = 0;
  std::vector<uint32_t> working;  // nonzero weights and the coordinates that would move now
  std::vector<double> moves;
  for (uint32_t j = 0; j < p_; ++j) {
    const double u = (c_pos * sums[3 * j] - c_neg * sums[3 * j + 1]) / n_;
    most = std::max(most, std::abs(u));
    excess += std::pow(std::max(std::abs(u) - l1_, 0.0), 2);
    l1_norm += std::abs(w_[j]);
    l2_norm += w_[j] * w_[j];
    nonzeros += w_[j] != 0;
    const double move = Move(j, (sums[3 * j + 1] - sums[3 * j]) / n_, sums[3 * j + 2] / n_);
    if (w_[j] != 0 || move != 0) working.push_back(j), moves.push_back(move);
  }
  if (intercept_) working.push_back(p_), moves.push_back(Move(p_, (neg - pos) / n_, sums[3 * p + 3] / n_));
  engine.scheduler().Restrict(working, moves);
  const double scale = l2_ == 0 && most > l1_ ? l1_ / most : 1.0;
  std::vector<double> entropy(shards_.size(), 0.0);
  engine.ForEachWorker([&](size_t k) {
    const Shard& s = shards_[k];
    for (size_t i = 0; i < s.y.size(); ++i)
      entropy[k] += Entropy(scale * (s.y[i] > 0 ? c_pos : c_neg) * s.theta[i]);
  });
  std::vector<double> dual{0.0};
  for (double e : entropy) dual[0] += e;
  engine.SumOverRanks(dual);
  FitCheck check;
  check.objective = sums[3 * p] / n_ + l1_ * l1_norm + l2_ / 2 * l2_norm;
  check.gap = check.objective - (dual[0] / n_ - (l2_ > 0 ? excess / (2 * l2_) : 0.0));
  check.relative_gap = check.gap / null_objective_;
  check.nonzeros = nonzeros;
  if (check.objective > last_objective_ * (1 + 1e-12)) bounded_ = true;
  last_objective_ = check.objective;
  anchor_w_ = w_;
  anchor_objective_ = check.objective;
  return check;
}

LinearFit LogisticProgram::Result(double lambda) const {
  LinearFit fit;
  fit.lambda = lambda;
  fit.intercept = intercept_ ? w_[p_] : 0.0;
  for (uint32_t j = 0; j < p_; ++j) {
    if (w_[j] != 0) fit.weights.emplace_back(ids_[j], w_[j]);
  }
  return fit;
}

}  // namespace

std::vector<double> BinaryLabels(const data::Dataset& d) {
  std::set<double> values(d.labels.begin(), d.labels.end());
  if (values.size() != 2) {
    throw InvalidArgumentError(
        fmt::format("logistic regression needs labels of two values; the data set has {}", values.size()));
  }
  std::vector<double> y;
  y.reserve(d.labels.size());
  for (double v : d.labels) y.push_back(v == *values.begin() ? -1.0 : 1.0);
  return y;
}

double LogisticLambdaMax(const data::Dataset& d, double l1_ratio, bool intercept) {
  const std::vector<double> y = BinaryLabels(d);
  const double n = static_cast<double>(d.rows());
  double positives = 0;
  for (double v : y) positives += v > 0;
  // At w = 0 with the best intercept, theta is the other class's share (1/2 with no intercept).
  const double theta_pos = intercept ? 1 - positives / n : 0.5, theta_neg = intercept ? positives / n : 0.5;
  std::vector<double> u(y.size());
  for (size_t i = 0; i < y.size(); ++i) u[i] = y[i] > 0 ? theta_pos : -theta_neg;
  const double most = data::MaxAbsTransposeProduct(d, u);
  return most / (n * l1_ratio);
}

std::vector<LinearFit> FitLogistic(comm::Context& ctx, const data::Dataset& d, const PathOptions& o) {
  CheckPathOptions(d, o);
  const std::vector<double> y = BinaryLabels(d);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> lambdas =
      PathLambdas(o.lambda > 0 ? 0.0 : LogisticLambdaMax(d, o.l1_ratio, o.intercept), o);
  LogisticProgram program(d, y, data::UsedFeatures(d), ctx.rank(), ctx.size(), o.engine.workers, o.intercept);
  return FitPath(ctx, program, lambdas, o, start);
}

}  // namespace parasol::apps::sparse_linear
