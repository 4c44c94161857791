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

double Entropy(double t) { return t <= 0 || t >= 1 ? 0.0 : -t * std::log(t) - (1 - t) * std::log1p(-t); }

// A sample's loss log(1 + exp(z)), z = -y margin, and what the next check's theta = sigmoid(z) and
// dual entropy are computed from: e = exp(-|z|) and l = log1p(e), so that log(1 + exp(z)) is
// max(z, 0) + l, log(theta) is -(l + max(-z, 0)) and log(1 - theta) is -(l + max(z, 0)). A check
// so calls two functions a sample where it called five (exp and log1p in the line search, exp for
// theta, log and log1p for the entropy: most of a check's time on a9a).
struct SoftPlus {
  double e, l;
  explicit SoftPlus(double z) : e(std::exp(-std::abs(z))), l(std::log1p(e)) {}
  double Value(double z) const { return std::max(z, 0.0) + l; }
};

// A worker's slice of the samples: its columns and labels; frozen at the last check (the anchor),
// each sample's margin x_i.w + b there, theta_i = sigmoid(-y_i margin_i), the slope of its loss
// (and the dual variable of the check), and its curvature theta_i (1 - theta_i); and each margin's
// move since the anchor (the margin is anchor_margin + move).
struct LogisticShard {
  std::shared_ptr<const data::ColumnMatrix> x;
  std::vector<double> y, anchor_margin, theta, curvature, move;
  std::vector<double> y_theta;  // y_i theta_i
  // The line search's last point, per sample: SoftPlus's e and l at its margin.
  std::vector<double> step_e, step_l;
  // At the anchor, per sample: log(1 + exp(z)), z = -y margin (the dual entropy's part of it).
  std::vector<double> softplus;
};

// The sum over a shard's samples of the entropy H(a theta), the dual objective's part, with a the
// scale of the sample's class (at most 1). From the anchor's loss log(1 + exp(z)) (SoftPlus):
// log(a theta) = log(a) + z - log(1 + exp(z)); at a = 1, H(theta) = log(1 + exp(z)) - theta z.
double DualEntropy(const LogisticShard& s, double a_pos, double a_neg) {
  const double log_pos = std::log(a_pos), log_neg = std::log(a_neg);
  double sum = 0;
  for (size_t i = 0; i < s.y.size(); ++i) {
    const bool positive = s.y[i] > 0;
    const double a = positive ? a_pos : a_neg, z = -s.y[i] * s.anchor_margin[i];
    if (a == 1) {
      sum += s.softplus[i] - s.theta[i] * z;
      continue;
    }
    const double t = a * s.theta[i];
    if (t <= 0) continue;
    sum += -t * ((positive ? log_pos : log_neg) + z - s.softplus[i]) - (1 - t) * std::log1p(-t);
  }
  return sum;
}

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
    first_violation_ = std::numeric_limits<double>::quiet_NaN();
    inner_tolerance_ = 1;
    sweeps_ = 0;
    for (LogisticShard& s : shards_) {
      for (size_t i = 0; i < s.move.size(); ++i) s.anchor_margin[i] += s.move[i];
      std::fill(s.move.begin(), s.move.end(), 0.0);
    }
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
  ModelState model_state() const override { return solved_ ? ModelState::kSolved : ModelState::kSolving; }

  size_t partials_per_coordinate() const override { return 1; }
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
  // How far coordinate j is from its optimality condition with the loss's gradient g: the size of
  // the penalised objective's least subgradient.
  double Violation(uint32_t j, double g) const;
  // A sweep's worth of updates of the model (Aggregate's) sums their violations; the model is
  // solved when that is small (LIBLINEAR's inner stopping).
  void CountSweep(std::span<const uint32_t> block, std::span<const double> gradients);
  // Margins and thetas recomputed from the weights, which become the shard's anchor.
  void RecomputeMargins(LogisticShard& s) const;
  // The line search's point (beta) becomes the anchor: margins, thetas and curvatures from the
  // SoftPlus it kept, without calling exp again.
  void MoveAnchor(LogisticShard& s, double beta) const;
  // Sample i's theta, curvature and loss at its anchor margin, from its SoftPlus's e and l.
  void Anchor(LogisticShard& s, size_t i, double e, double l) const;
  // The objective at anchor + beta (w - anchor), whose margins lie on the line between the
  // anchor's and today's; each shard keeps its samples' SoftPlus there (step_e, step_l).
  // Collective.
  double ObjectiveAlongStep(modelpar::RoundEngine& engine, double beta);
  // newGLMNET's line search (above); w_ ends on the point it accepts (accepted_beta_ along the
  // step), whose objective it returns (the check's: summing the losses again was a tenth of a9a's
  // solver). Collective.
  double LineSearch(modelpar::RoundEngine& engine);
  // Per coordinate j (p_: the intercept's column of ones), the sums over the samples at the anchor
  // of x y theta (3j), x theta (3j + 1) and x^2 theta (1 - theta) (3j + 2). Collective.
  std::vector<double> ColumnSums(modelpar::RoundEngine& engine);
  // The features' sums of one shard; those of x theta only with kTheta (the dual point needs them
  // to balance the classes when there is an intercept).
  template <bool kTheta>
  void SumColumns(const LogisticShard& s, std::vector<double>& out) const;

  std::vector<uint32_t> ids_;
  uint32_t p_;
  bool intercept_;
  double n_;
  std::vector<double> col_sum_, sq_;  // per feature: sum and sum of squares of its column
  std::vector<double> w_;             // per coordinate, the intercept last
  // Per coordinate, at the anchor (the last check): the loss's mean gradient and curvature. Between
  // two checks only the gradient's change with the margins' moves is summed over the samples.
  std::vector<double> anchor_gradient_, anchor_curvature_;
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
  // LIBLINEAR's inner stopping: the model of a check is solved once a sweep's summed violation is
  // at most inner_tolerance_ times the lambda's first check's summed violation; the tolerance is
  // quartered whenever one sweep sufficed, so the models are solved more finely as the fit nears
  // its end. (With a fixed ten sweeps a check, a9a's fit took 25 checks and 11,550 updates.)
  double first_violation_ = std::numeric_limits<double>::quiet_NaN();
  double inner_tolerance_ = 1;
  uint64_t sweep_size_ = 0;  // the working set's size at the last check
  uint64_t sweep_updates_ = 0;
  double sweep_violation_ = 0;
  uint64_t sweeps_ = 0;  // since the last check
  bool solved_ = false;
  std::vector<double> gradients_;  // Aggregate's, kept: a round allocates nothing
  // The line search's: the point it accepted, and the point whose SoftPlus the shards keep (NaN:
  // none; the next anchor's margins are then summed from the weights).
  double accepted_beta_ = 0;
  double step_beta_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<LogisticShard> shards_;
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
    const data::ColumnMatrix::Moments m = all_->ColumnMoments(j);
    col_sum_[j] = m.sum, sq_[j] = m.squares;
  }
  double positives = 0;
  for (double v : y) positives += v > 0;
  const double b0 = intercept ? std::log(positives / (n_ - positives)) : 0.0;
  null_objective_ = intercept ? Entropy(positives / n_) : std::log(2.0);
  w_.assign(coordinates(), 0.0);
  anchor_gradient_.assign(coordinates(), 0.0);
  anchor_curvature_.assign(coordinates(), 0.0);
  if (intercept) w_[p_] = b0;
  const auto [r0, r1] = collective::BlockRange(d.rows(), ranks, rank);
  for (uint32_t k = 0; k < workers; ++k) {
    const auto [b, e] = collective::BlockRange(r1 - r0, static_cast<int>(workers), static_cast<int>(k));
    LogisticShard s;
    s.x = data::SliceRows(all_, r0 + b, r0 + e);  // the same matrix when a shard is every row
    s.y.assign(y.begin() + static_cast<ptrdiff_t>(r0 + b), y.begin() + static_cast<ptrdiff_t>(r0 + e));
    RecomputeMargins(s);
    shards_.push_back(std::move(s));
  }
  anchor_w_ = w_;
}

void LogisticProgram::RecomputeMargins(LogisticShard& s) const {
  s.anchor_margin.assign(s.y.size(), intercept_ ? w_[p_] : 0.0);
  for (size_t j = 0; j < p_; ++j) {
    if (w_[j] == 0) continue;
    for (uint64_t e = s.x->col_offsets[j]; e < s.x->col_offsets[j + 1]; ++e)
      s.anchor_margin[s.x->row_ids[e]] += w_[j] * s.x->values[e];
  }
  for (auto* v : {&s.theta, &s.curvature, &s.y_theta, &s.softplus}) v->resize(s.y.size());
  for (size_t i = 0; i < s.y.size(); ++i) {
    const SoftPlus f(-s.y[i] * s.anchor_margin[i]);
    Anchor(s, i, f.e, f.l);
  }
  s.move.assign(s.y.size(), 0.0);
}

void LogisticProgram::MoveAnchor(LogisticShard& s, double beta) const {
  for (size_t i = 0; i < s.y.size(); ++i) {
    s.anchor_margin[i] += beta * s.move[i];
    Anchor(s, i, s.step_e[i], s.step_l[i]);
  }
  std::fill(s.move.begin(), s.move.end(), 0.0);
}

void LogisticProgram::Anchor(LogisticShard& s, size_t i, double e, double l) const {
  const double z = -s.y[i] * s.anchor_margin[i];
  s.theta[i] = z >= 0 ? 1 / (1 + e) : e / (1 + e);  // sigmoid(z)
  s.curvature[i] = s.theta[i] * (1 - s.theta[i]);
  s.y_theta[i] = s.y[i] * s.theta[i];
  s.softplus[i] = std::max(z, 0.0) + l;
}

double LogisticProgram::ObjectiveAlongStep(modelpar::RoundEngine& engine, double beta) {
  std::vector<double> loss(shards_.size(), 0.0);
  engine.ForEachWorker([&](size_t k) {
    LogisticShard& s = shards_[k];
    s.step_e.resize(s.y.size());
    s.step_l.resize(s.y.size());
    for (size_t i = 0; i < s.y.size(); ++i) {
      const double z = -s.y[i] * (s.anchor_margin[i] + beta * s.move[i]);
      const SoftPlus f(z);
      s.step_e[i] = f.e, s.step_l[i] = f.l;
      loss[k] += f.Value(z);
    }
  });
  step_beta_ = beta;
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

double LogisticProgram::LineSearch(modelpar::RoundEngine& engine) {
  step_beta_ = std::numeric_limits<double>::quiet_NaN();
  if (std::isnan(anchor_objective_)) anchor_objective_ = ObjectiveAlongStep(engine, 0);
  accepted_beta_ = 0;
  if (w_ == anchor_w_) return anchor_objective_;
  accepted_beta_ = 1;
  if (!std::isfinite(anchor_objective_)) return ObjectiveAlongStep(engine, 1);
  constexpr int kHalvings = 20;
  double beta = 1;
  int t = 0;
  double f = anchor_objective_;
  // Every rank sums the same losses, so every rank takes the same beta.
  for (; t < kHalvings; ++t, beta /= 2) {
    f = ObjectiveAlongStep(engine, beta);
    if (std::isfinite(f) && f <= anchor_objective_ + 1e-12 * std::abs(anchor_objective_)) break;
  }
  if (t == kHalvings) {  // no decrease along the step: back to the anchor
    beta = 0, bounded_ = true;
    f = anchor_objective_;
  }
  accepted_beta_ = beta;
  if (beta == 1) return f;
  for (size_t j = 0; j < w_.size(); ++j) w_[j] = anchor_w_[j] + beta * (w_[j] - anchor_w_[j]);
  return f;
}

// The quadratic model's gradient of a coordinate is its gradient at the anchor (the check summed
// -x y theta) plus the sum of x d m over the samples, d a sample's curvature and m its margin's
// move since the anchor; the model's curvature is the anchor's. So an update reads two numbers
// a sample (where it read four and summed the curvature again: 40% of a9a's solver).
void LogisticProgram::Update(size_t worker, std::span<const uint32_t> block, std::span<double> out) {
  const LogisticShard& s = shards_[worker];
  for (size_t k = 0; k < block.size(); ++k) {
    double g = 0;
    if (block[k] == p_) {  // the intercept: a column of ones
      for (size_t i = 0; i < s.y.size(); ++i) g += (bounded_ ? 1.0 : s.curvature[i]) * s.move[i];
    } else {
      g = bounded_ ? s.x->Dot(block[k], s.move) : s.x->Dot(block[k], s.curvature, s.move);
    }
    out[k] = bounded_ ? 0.25 * g : g;
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

double LogisticProgram::Violation(uint32_t j, double g) const {
  if (j == p_) return std::abs(g);
  const double w = w_[j], gl = g + l2_ * w;
  if (w == 0) return std::max(std::abs(gl) - l1_, 0.0);
  return std::abs(gl + (w > 0 ? l1_ : -l1_));
}

void LogisticProgram::CountSweep(std::span<const uint32_t> block, std::span<const double> gradients) {
  for (size_t k = 0; k < block.size(); ++k) sweep_violation_ += Violation(block[k], gradients[k]);
  sweep_updates_ += block.size();
  if (sweep_updates_ < sweep_size_) return;
  ++sweeps_;
  solved_ = sweep_violation_ <= inner_tolerance_ * first_violation_;
  sweep_updates_ = 0;
  sweep_violation_ = 0;
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
  gradients_.resize(block.size());
  for (size_t k = 0; k < block.size(); ++k) gradients_[k] = anchor_gradient_[block[k]] + sums[k] / n_;
  CountSweep(block, gradients_);
  for (size_t k = 0; k < block.size(); ++k) {
    const uint32_t j = block[k];
    deltas[k] = Move(j, gradients_[k], anchor_curvature_[j]);
    w_[j] += deltas[k];
    finite_ = finite_ && std::isfinite(w_[j]);
  }
}

void LogisticProgram::Commit(size_t worker, std::span<const uint32_t> block, std::span<const double> deltas) {
  LogisticShard& s = shards_[worker];
  for (size_t k = 0; k < block.size(); ++k) {
    const double d = deltas[k];
    if (d == 0) continue;
    if (block[k] == p_) {
      for (double& m : s.move) m += d;
    } else {
      s.x->AddTo(block[k], d, s.move);
    }
  }
}

template <bool kTheta>
void LogisticProgram::SumColumns(const LogisticShard& s, std::vector<double>& out) const {
  // Sums in registers, not in `out` by the sample's class (that was 12% of a9a's command), and two
  // of each, so that an entry's adds do not wait for the last entry's.
  const uint32_t* rows = s.x->row_ids.data();
  const double* values = s.x->values.data();
  const double *y_theta = s.y_theta.data(), *theta = s.theta.data(), *curvature = s.curvature.data();
  for (size_t j = 0; j < p_; ++j) {
    double yt[2] = {0, 0}, t[2] = {0, 0}, h[2] = {0, 0};
    uint64_t e = s.x->col_offsets[j];
    const uint64_t end = s.x->col_offsets[j + 1];
    for (; e + 2 <= end; e += 2) {
      for (int q = 0; q < 2; ++q) {
        const uint32_t i = rows[e + q];
        const double x = values[e + q];
        yt[q] += x * y_theta[i];
        if constexpr (kTheta) t[q] += x * theta[i];
        h[q] += x * x * curvature[i];
      }
    }
    if (e < end) {
      const uint32_t i = rows[e];
      yt[0] += values[e] * y_theta[i];
      if constexpr (kTheta) t[0] += values[e] * theta[i];
      h[0] += values[e] * values[e] * curvature[i];
    }
    out[3 * j] = yt[0] + yt[1], out[3 * j + 1] = t[0] + t[1], out[3 * j + 2] = h[0] + h[1];
  }
}

std::vector<double> LogisticProgram::ColumnSums(modelpar::RoundEngine& engine) {
  const size_t p = p_;
  std::vector<std::vector<double>> parts(shards_.size());
  engine.ForEachWorker([&](size_t k) {
    LogisticShard& s = shards_[k];
    // The line search's point is where the weights are (w_ == anchor_w_ with no search: beta 0).
    if (step_beta_ == accepted_beta_) {
      MoveAnchor(s, accepted_beta_);
    } else {
      RecomputeMargins(s);
    }
    std::vector<double>& out = parts[k];
    out.assign(3 * p + 3, 0.0);
    if (intercept_) {
      SumColumns<true>(s, out);
    } else {
      SumColumns<false>(s, out);
    }
    for (size_t i = 0; i < s.y.size(); ++i) {
      out[3 * p] += s.y_theta[i];
      out[3 * p + 1] += s.theta[i];
      out[3 * p + 2] += s.curvature[i];
    }
  });
  std::vector<double> sums(3 * p + 3, 0.0);
  for (const auto& part : parts) {
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += part[i];
  }
  engine.SumOverRanks(sums);
  return sums;
}

FitCheck LogisticProgram::Check(modelpar::RoundEngine& engine) {
  const size_t p = p_;
  if (sweeps_ == 1) inner_tolerance_ /= 4;
  const double objective = LineSearch(engine);
  const std::vector<double> sums = ColumnSums(engine);
  // The dual point: theta, its classes scaled to equal sums when there is an intercept (its
  // constraint sum y theta = 0), then scaled into |X'(y theta)| / n <= l1 when l2 is 0.
  auto positives = [&](size_t j) { return (sums[3 * j + 1] + sums[3 * j]) / 2; };  // sum of x theta
  auto negatives = [&](size_t j) { return (sums[3 * j + 1] - sums[3 * j]) / 2; };
  const double pos = positives(p), neg = negatives(p);
  const double least = std::min(pos, neg);
  const double c_pos = !intercept_ ? 1.0 : (pos > 0 ? least / pos : 0.0);
  const double c_neg = !intercept_ ? 1.0 : (neg > 0 ? least / neg : 0.0);
  double most = 0, excess = 0, violation = 0;
  uint64_t nonzeros = 0;
  std::vector<uint32_t> working;  // nonzero weights and the coordinates that would move now
  std::vector<double> moves;
  for (uint32_t j = 0; j < p_; ++j) {
    anchor_gradient_[j] = -sums[3 * j] / n_;
    anchor_curvature_[j] = sums[3 * j + 2] / n_;
    const double u = (c_pos * positives(j) - c_neg * negatives(j)) / n_;
    most = std::max(most, std::abs(u));
    excess += std::pow(std::max(std::abs(u) - l1_, 0.0), 2);
    nonzeros += w_[j] != 0;
    const double move = Move(j, anchor_gradient_[j], anchor_curvature_[j]);
    violation += Violation(j, anchor_gradient_[j]);
    if (w_[j] != 0 || move != 0) working.push_back(j), moves.push_back(move);
  }
  if (intercept_) {
    anchor_gradient_[p_] = -sums[3 * p] / n_;
    anchor_curvature_[p_] = sums[3 * p + 2] / n_;
    working.push_back(p_), moves.push_back(Move(p_, anchor_gradient_[p_], anchor_curvature_[p_]));
    violation += Violation(p_, anchor_gradient_[p_]);
  }
  engine.scheduler().Restrict(working, moves);
  if (std::isnan(first_violation_)) first_violation_ = violation;
  sweep_size_ = working.size();
  sweep_updates_ = sweeps_ = 0;
  sweep_violation_ = 0;
  solved_ = false;
  const double scale = l2_ == 0 && most > l1_ ? l1_ / most : 1.0;
  std::vector<double> entropy(shards_.size(), 0.0);
  engine.ForEachWorker([&](size_t k) { entropy[k] = DualEntropy(shards_[k], scale * c_pos, scale * c_neg); });
  std::vector<double> dual{0.0};
  for (double e : entropy) dual[0] += e;
  engine.SumOverRanks(dual);
  FitCheck check;
  check.objective = objective;
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
