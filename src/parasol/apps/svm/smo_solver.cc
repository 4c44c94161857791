#include "parasol/apps/svm/smo_solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "parasol/apps/svm/kernel_cache.h"
#include "parasol/collective/collectives.h"
#include "parasol/core/enum_names.h"
#include "parasol/core/error.h"

namespace parasol::apps::svm {

constexpr EnumName<Elimination> kEliminationNames[] = {{Elimination::kNone, "none"},
                                                       {Elimination::kEarliest, "earliest"},
                                                       {Elimination::kStandard, "standard"},
                                                       {Elimination::kLazy, "lazy"}};

Elimination ParseElimination(std::string_view name) {
  return ParseName(kEliminationNames, name, "elimination");
}

std::string_view EliminationName(Elimination e) { return NameOf(kEliminationNames, e); }

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The curvature used when K_ii + K_jj - 2 K_ij is not positive (a kernel that is not PSD, or two
// equal samples).
constexpr double kTau = 1e-12;

enum Bound : uint8_t { kLower, kFree, kUpper };

// Every rank's `mine` (the same count on each), rank r's at r * count.
std::vector<double> GatherEach(comm::Context& ctx, std::span<const double> mine) {
  std::vector<double> all(mine.size() * static_cast<size_t>(ctx.size()));
  if (ctx.size() == 1) {
    std::copy(mine.begin(), mine.end(), all.begin());
  } else {
    collective::Allgather<double>(ctx, mine, all);
  }
  return all;
}

// The working set's choice on one rank, or agreed over all ranks.
struct Pick {
  double value = -kInf;
  int64_t id = -1;  // global sample id; -1: none
  double alpha = 0, grad = 0;
};

// One iteration's working pair, or the finding that there is none worth taking.
struct Step {
  Pick i, j;
  const float* ki = nullptr;
  double kij = 0;
  double violation = kInf;
  bool optimal = false;
};

class SmoSolver {
 public:
  SmoSolver(comm::Context& ctx, const KernelMatrix& kernel, std::span<const int8_t> y, const SmoOptions& o);
  SmoResult Run();

 private:
  bool InUp(size_t t) const { return y_[begin_ + t] > 0 ? bound_[t] != kUpper : bound_[t] != kLower; }
  bool InLow(size_t t) const { return y_[begin_ + t] > 0 ? bound_[t] != kLower : bound_[t] != kUpper; }
  int8_t LocalY(size_t t) const { return y_[begin_ + t]; }
  void SetPenalties(size_t t) {
    up_penalty_[t] = InUp(t) ? 0.0 : -kInf;
    low_penalty_[t] = InLow(t) ? 0.0 : -kInf;
  }
  bool Owns(int64_t id) const {
    return id >= static_cast<int64_t>(begin_) && id < static_cast<int64_t>(end_);
  }

  Step Select();
  Pick SelectI();
  // j given i; *low_max gets the largest y G over I_low (every rank's).
  Pick SelectJ(const Pick& i, const float* ki, double* low_max, double* kij);
  void Update(const Pick& i, const Pick& j, double kij, const float* ki);
  void SetAlpha(int64_t id, double old_alpha, double alpha);
  // Key's kernel column over this rank's samples (the active ones only, unless `full`).
  const float* ColumnOf(int64_t id, bool full);
  void Eliminate();
  void Reconstruct();
  void ActivateAll();
  void WarmStart(std::span<const double> alpha);
  std::vector<double> GatherAlpha();
  uint64_t GlobalCount(uint64_t mine);
  void ReportProgress(uint64_t iteration, double violation);
  void Finish(SmoResult* r);
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  comm::Context& ctx_;
  const KernelMatrix& kernel_;
  std::span<const int8_t> y_;
  const SmoOptions& o_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  size_t begin_ = 0, end_ = 0, m_ = 0;
  std::vector<double> alpha_, grad_, grad_bar_, diag_;
  // Per sample: y as a double, and 0 or -inf by whether it is in I_up / I_low (the selections'
  // loops add them instead of branching).
  std::vector<double> sign_, up_penalty_, low_penalty_;
  std::vector<uint8_t> bound_, strikes_;
  std::vector<uint32_t> active_;         // local ids, ascending
  std::vector<uint32_t> active_rows_;    // the same as global row ids
  std::vector<uint32_t> inactive_rows_;  // the others, as global row ids
  std::vector<uint32_t> all_rows_;
  bool all_active_ = true;  // on every rank
  bool unshrunk_ = false;   // the one early rebuild (near the optimum) has happened
  KernelCache cache_;
  KernelMatrix::Scratch scratch_;
  std::vector<float> column_tmp_;
  uint64_t eliminations_ = 0, reconstructions_ = 0, wrongly_eliminated_ = 0;
};

SmoSolver::SmoSolver(comm::Context& ctx, const KernelMatrix& kernel, std::span<const int8_t> y,
                     const SmoOptions& o)
    : ctx_(ctx),
      kernel_(kernel),
      y_(y),
      o_(o),
      cache_(kernel.rows(),
             collective::BlockRange(kernel.rows(), ctx.size(), ctx.rank()).second -
                 collective::BlockRange(kernel.rows(), ctx.size(), ctx.rank()).first,
             o.cache_bytes) {
  std::tie(begin_, end_) = collective::BlockRange(kernel.rows(), ctx.size(), ctx.rank());
  m_ = end_ - begin_;
  alpha_.assign(m_, 0.0);
  grad_.assign(m_, -1.0);  // G = Qa - e at a = 0
  grad_bar_.assign(m_, 0.0);
  bound_.assign(m_, kLower);
  strikes_.assign(m_, 0);
  sign_.resize(m_);
  up_penalty_.resize(m_);
  low_penalty_.resize(m_);
  for (size_t t = 0; t < m_; ++t) {
    sign_[t] = LocalY(t);
    SetPenalties(t);
    diag_.push_back(kernel.Diagonal(begin_ + t));
    active_.push_back(static_cast<uint32_t>(t));
    all_rows_.push_back(static_cast<uint32_t>(begin_ + t));
  }
  active_rows_ = all_rows_;
  if (!o.start_alpha.empty()) WarmStart(o.start_alpha);
}

// Multipliers from a checkpoint: this rank's share, its bounds, and the gradient G = Qa - e and
// G_bar of its samples from every sample with a > 0 (every rank holds every multiplier).
void SmoSolver::WarmStart(std::span<const double> alpha) {
  for (size_t t = 0; t < m_; ++t) {
    alpha_[t] = alpha[begin_ + t];
    bound_[t] = alpha_[t] >= o_.c ? kUpper : (alpha_[t] <= 0 ? kLower : kFree);
    SetPenalties(t);
  }
  column_tmp_.resize(m_);
  for (size_t s = 0; s < alpha.size(); ++s) {
    if (alpha[s] <= 0) continue;
    kernel_.Column(s, all_rows_, column_tmp_.data(), scratch_);
    const double coef = y_[s] * alpha[s];
    for (size_t t = 0; t < m_; ++t) {
      grad_[t] += LocalY(t) * coef * column_tmp_[t];
      if (alpha[s] >= o_.c) grad_bar_[t] += LocalY(t) * y_[s] * o_.c * column_tmp_[t];
    }
  }
}

Pick SmoSolver::SelectI() {
  // Branch-free over the samples: -inf penalties keep those outside I_up from being chosen.
  double top = -kInf;
  int64_t arg = -1;
  for (uint32_t t : active_) {
    const double v = up_penalty_[t] - sign_[t] * grad_[t];
    if (v > top) {
      top = v;
      arg = t;
    }
  }
  Pick mine;
  if (arg >= 0)
    mine = {top, static_cast<int64_t>(begin_) + arg, alpha_[static_cast<size_t>(arg)],
            grad_[static_cast<size_t>(arg)]};
  const double payload[4] = {mine.value, static_cast<double>(mine.id), mine.alpha, mine.grad};
  const std::vector<double> all = GatherEach(ctx_, payload);
  Pick best;
  for (size_t r = 0; r < all.size(); r += 4) {
    // Ranks hold ascending ids, so the first of equal values is the lowest id.
    if (all[r + 1] >= 0 && all[r] > best.value)
      best = {all[r], static_cast<int64_t>(all[r + 1]), all[r + 2], all[r + 3]};
  }
  return best;
}

Pick SmoSolver::SelectJ(const Pick& i, const float* ki, double* low_max, double* kij) {
  const double di = kernel_.Diagonal(static_cast<size_t>(i.id));
  double mine_low = -kInf;
  Pick mine;
  mine.value = kInf;  // the smallest (most negative) change of the objective
  float mine_kij = 0;
  int64_t arg = -1;
  for (uint32_t t : active_) {
    const double yg = low_penalty_[t] + sign_[t] * grad_[t];  // -inf outside I_low
    mine_low = std::max(mine_low, yg);
    const double b = i.value + yg;
    double eta = di + diag_[t] - 2.0 * ki[t];
    eta = eta > 0 ? eta : kTau;
    const double decrease = b > 0 ? -b * b / eta : kInf;
    if (decrease < mine.value) {
      mine.value = decrease;
      arg = t;
    }
  }
  if (arg >= 0) {
    const auto t = static_cast<size_t>(arg);
    mine = {mine.value, static_cast<int64_t>(begin_ + t), alpha_[t], grad_[t]};
    mine_kij = ki[t];
  }
  const double payload[6] = {mine_low,   mine.value, static_cast<double>(mine.id),
                             mine.alpha, mine.grad,  mine_kij};
  const std::vector<double> all = GatherEach(ctx_, payload);
  Pick best;
  best.value = kInf;
  *low_max = -kInf;
  for (size_t r = 0; r < all.size(); r += 6) {
    *low_max = std::max(*low_max, all[r]);
    if (all[r + 2] >= 0 && all[r + 1] < best.value) {
      best = {all[r + 1], static_cast<int64_t>(all[r + 2]), all[r + 3], all[r + 4]};
      *kij = all[r + 5];
    }
  }
  return best;
}

Step SmoSolver::Select() {
  Step s;
  s.i = SelectI();
  if (s.i.id < 0) {
    s.optimal = true;
    return s;
  }
  s.ki = ColumnOf(s.i.id, false);
  double low_max = -kInf;
  s.j = SelectJ(s.i, s.ki, &low_max, &s.kij);
  s.violation = s.i.value + low_max;
  s.optimal = s.j.id < 0 || s.violation < o_.tolerance;
  return s;
}

const float* SmoSolver::ColumnOf(int64_t id, bool full) {
  const auto key = static_cast<uint32_t>(id);
  bool cached_full = false;
  if (float* c = cache_.Find(key, &cached_full)) {
    if (cached_full || !full) return c;
    // Complete a partial column with the eliminated samples' entries.
    column_tmp_.resize(inactive_rows_.size());
    kernel_.Column(static_cast<size_t>(id), inactive_rows_, column_tmp_.data(), scratch_);
    for (size_t k = 0; k < inactive_rows_.size(); ++k) c[inactive_rows_[k] - begin_] = column_tmp_[k];
    cache_.MarkFull(key);
    return c;
  }
  const bool whole = full || active_.size() == m_;
  float* c = cache_.Insert(key, whole);
  if (whole) {
    kernel_.Column(static_cast<size_t>(id), all_rows_, c, scratch_);
  } else {
    column_tmp_.resize(active_.size());
    kernel_.Column(static_cast<size_t>(id), active_rows_, column_tmp_.data(), scratch_);
    for (size_t k = 0; k < active_.size(); ++k) c[active_[k]] = column_tmp_[k];
  }
  return c;
}

// Moves a_i and a_j along y_i a_i + y_j a_j = const (a_i += y_i s, a_j -= y_j s) to the minimum
// of the objective on that line within the box, then updates the gradient of the active samples.
// Every rank computes the same step from the picks' values.
void SmoSolver::Update(const Pick& i, const Pick& j, double kij, const float* ki) {
  const int8_t yi = y_[static_cast<size_t>(i.id)], yj = y_[static_cast<size_t>(j.id)];
  const double c = o_.c;
  double eta =
      kernel_.Diagonal(static_cast<size_t>(i.id)) + kernel_.Diagonal(static_cast<size_t>(j.id)) - 2 * kij;
  if (eta <= 0) eta = kTau;
  // d/ds of the objective at s = 0 is y_i G_i - y_j G_j.
  const double s_free = -(yi * i.grad - yj * j.grad) / eta;
  const double hi_i = yi > 0 ? c - i.alpha : i.alpha, lo_i = yi > 0 ? -i.alpha : i.alpha - c;
  const double hi_j = yj > 0 ? j.alpha : c - j.alpha, lo_j = yj > 0 ? j.alpha - c : -j.alpha;
  const double hi = std::min(hi_i, hi_j), lo = std::max(lo_i, lo_j);
  const double s = std::clamp(s_free, lo, hi);
  double ai = std::clamp(i.alpha + yi * s, 0.0, c), aj = std::clamp(j.alpha - yj * s, 0.0, c);
  // A step that ends on a bound ends exactly on it (rounding must not leave 1e-17 above 0).
  if (s == hi) {
    if (hi == hi_i) ai = yi > 0 ? c : 0.0;
    if (hi == hi_j) aj = yj > 0 ? 0.0 : c;
  } else if (s == lo) {
    if (lo == lo_i) ai = yi > 0 ? 0.0 : c;
    if (lo == lo_j) aj = yj > 0 ? c : 0.0;
  }
  const double ci = yi * (ai - i.alpha), cj = yj * (aj - j.alpha);
  const float* kj = ColumnOf(j.id, false);
  for (uint32_t t : active_) grad_[t] += sign_[t] * (ci * ki[t] + cj * kj[t]);
  SetAlpha(i.id, i.alpha, ai);
  SetAlpha(j.id, j.alpha, aj);
}

// Sets sample id's multiplier on its owner and, where it reaches or leaves C, G_bar on every rank:
// G_bar_t = C sum over samples s at C of Q_st, the part of the gradient that Reconstruct() does
// not recompute.
void SmoSolver::SetAlpha(int64_t id, double old_alpha, double alpha) {
  const bool was_upper = old_alpha >= o_.c, is_upper = alpha >= o_.c;
  if (was_upper != is_upper) {
    const float* k = ColumnOf(id, true);
    const double delta = (is_upper ? o_.c : -o_.c) * y_[static_cast<size_t>(id)];
    for (size_t t = 0; t < m_; ++t) grad_bar_[t] += delta * LocalY(t) * k[t];
  }
  if (Owns(id)) {
    const size_t t = static_cast<size_t>(id) - begin_;
    alpha_[t] = alpha;
    bound_[t] = is_upper ? kUpper : (alpha <= 0 ? kLower : kFree);
    SetPenalties(t);
  }
}

// LIBSVM's shrinking test, with the maximal violations over every rank: a sample at a bound is in
// only one of I_up and I_low, and leaves when even the best partner from the other set could not
// make a violating pair with it.
void SmoSolver::Eliminate() {
  double up = -kInf, low = -kInf;
  for (uint32_t t : active_) {
    if (InUp(t)) up = std::max(up, -LocalY(t) * grad_[t]);
    if (InLow(t)) low = std::max(low, LocalY(t) * grad_[t]);
  }
  const double payload[2] = {up, low};
  const std::vector<double> all = GatherEach(ctx_, payload);
  for (size_t r = 0; r < all.size(); r += 2) {
    up = std::max(up, all[r]);
    low = std::max(low, all[r + 1]);
  }
  if (!unshrunk_ && up + low <= 10 * o_.tolerance) {
    // Close to the optimum: bring every sample back once, so that an early mistake costs one
    // rebuild here rather than many iterations at the end.
    unshrunk_ = true;
    Reconstruct();
    ActivateAll();
  }
  const uint8_t needed = o_.elimination == Elimination::kLazy ? 3 : 1;
  std::vector<uint32_t> keep;
  keep.reserve(active_.size());
  for (uint32_t t : active_) {
    const bool leave =
        bound_[t] != kFree && (InUp(t) ? -LocalY(t) * grad_[t] + low < 0 : up + LocalY(t) * grad_[t] < 0);
    strikes_[t] = leave ? static_cast<uint8_t>(std::min(strikes_[t] + 1, 255)) : 0;
    if (strikes_[t] < needed)
      keep.push_back(t);
    else
      ++eliminations_;
  }
  active_ = std::move(keep);
  active_rows_.clear();
  inactive_rows_.clear();
  for (size_t t = 0, k = 0; t < m_; ++t) {
    const bool active = k < active_.size() && active_[k] == t;
    (active ? active_rows_ : inactive_rows_).push_back(static_cast<uint32_t>(begin_ + t));
    k += active;
  }
  all_active_ = GlobalCount(active_.size()) == kernel_.rows();
}

// The gradient of the eliminated samples, which stopped being updated when they left:
// G_t = G_bar_t - 1 + y_t sum over free s of y_s a_s K(x_s, x_t). Collective.
void SmoSolver::Reconstruct() {
  const std::vector<uint32_t>& inactive = inactive_rows_;
  // Every rank's free multipliers: (sample id, y a) pairs.
  std::vector<double> mine;
  for (size_t t = 0; t < m_; ++t)
    if (bound_[t] == kFree) mine.insert(mine.end(), {static_cast<double>(begin_ + t), LocalY(t) * alpha_[t]});
  const std::vector<double> free =
      ctx_.size() == 1 ? mine : collective::AllgatherVariable<double>(ctx_, std::span<const double>(mine));
  ++reconstructions_;
  if (inactive.empty()) return;
  for (uint32_t row : inactive) grad_[row - begin_] = grad_bar_[row - begin_] - 1;
  column_tmp_.resize(inactive.size());
  for (size_t f = 0; f + 1 < free.size(); f += 2) {
    kernel_.Column(static_cast<size_t>(free[f]), inactive, column_tmp_.data(), scratch_);
    for (size_t k = 0; k < inactive.size(); ++k) {
      const size_t t = inactive[k] - begin_;
      grad_[t] += LocalY(t) * free[f + 1] * column_tmp_[k];
    }
  }
}

void SmoSolver::ActivateAll() {
  if (active_.size() != m_) cache_.DropPartial();
  active_.clear();
  for (size_t t = 0; t < m_; ++t) active_.push_back(static_cast<uint32_t>(t));
  active_rows_ = all_rows_;
  inactive_rows_.clear();
  std::fill(strikes_.begin(), strikes_.end(), 0);
  all_active_ = true;
}

// Every sample's multiplier, on every rank. Collective.
std::vector<double> SmoSolver::GatherAlpha() {
  return collective::AllgatherBlocks<double>(ctx_, alpha_, kernel_.rows());
}

uint64_t SmoSolver::GlobalCount(uint64_t mine) {
  const double n = static_cast<double>(mine);
  const std::vector<double> all = GatherEach(ctx_, std::span<const double>(&n, 1));
  double sum = 0;
  for (double v : all) sum += v;
  return static_cast<uint64_t>(sum);
}

void SmoSolver::ReportProgress(uint64_t iteration, double violation) {
  uint64_t svs = 0;
  for (double a : alpha_) svs += a > 0;
  const double payload[2] = {static_cast<double>(active_.size()), static_cast<double>(svs)};
  const std::vector<double> all = GatherEach(ctx_, payload);
  SmoProgress p{.iteration = iteration, .seconds = Seconds(), .violation = violation};
  for (size_t r = 0; r < all.size(); r += 2) {
    p.active += static_cast<uint64_t>(all[r]);
    p.support_vectors += static_cast<uint64_t>(all[r + 1]);
  }
  if (o_.on_progress) o_.on_progress(p);
}

SmoResult SmoSolver::Run() {
  const uint64_t n = kernel_.rows();
  const uint64_t max_iterations =
      o_.max_iterations > 0 ? o_.max_iterations : std::max<uint64_t>(10'000'000, 100 * n);
  const uint64_t interval = o_.elimination == Elimination::kEarliest ? 100 : std::min<uint64_t>(n, 1000);
  uint64_t countdown = interval;
  SmoResult r;
  r.iterations = o_.start_iteration;
  uint64_t reported = r.iterations;
  Step step;
  while (r.iterations < max_iterations) {
    if (o_.checkpoint_every > 0 && r.iterations % o_.checkpoint_every == 0 &&
        r.iterations > o_.start_iteration && o_.on_checkpoint) {
      o_.on_checkpoint(r.iterations, GatherAlpha());
    }
    if (o_.elimination != Elimination::kNone && --countdown == 0) {
      countdown = interval;
      Eliminate();
    }
    if (o_.progress_every > 0 && r.iterations % o_.progress_every == 0 && r.iterations > reported) {
      reported = r.iterations;
      ReportProgress(r.iterations, step.violation);
    }
    step = Select();
    if (step.optimal) {
      if (all_active_) break;
      // Optimal over the active set: rebuild the eliminated samples' gradient and look again.
      Reconstruct();
      ActivateAll();
      step = Select();
      if (step.optimal) break;
      ++wrongly_eliminated_;
      countdown = 1;
    }
    Update(step.i, step.j, step.kij, step.ki);
    ++r.iterations;
  }
  r.iteration_limit = r.iterations >= max_iterations;
  if (!all_active_) {
    Reconstruct();
    ActivateAll();
  }
  ReportProgress(r.iterations, step.violation);
  Finish(&r);
  return r;
}

// rho (LIBSVM's: the mean of y G over free samples, else the middle of the bounds the others set),
// the objective, and every multiplier on every rank.
void SmoSolver::Finish(SmoResult* r) {
  double sum_free = 0, free = 0, upper_bound = kInf, lower_bound = -kInf, objective = 0;
  for (size_t t = 0; t < m_; ++t) {
    const double yg = LocalY(t) * grad_[t];
    objective += alpha_[t] * (grad_[t] - 1) / 2;
    if (bound_[t] == kFree) {
      sum_free += yg;
      ++free;
    } else if ((bound_[t] == kUpper) == (LocalY(t) < 0)) {
      upper_bound = std::min(upper_bound, yg);
    } else {
      lower_bound = std::max(lower_bound, yg);
    }
  }
  const double payload[5] = {sum_free, free, upper_bound, lower_bound, objective};
  const std::vector<double> all = GatherEach(ctx_, payload);
  sum_free = free = objective = 0;
  for (size_t k = 0; k < all.size(); k += 5) {
    sum_free += all[k];
    free += all[k + 1];
    upper_bound = std::min(upper_bound, all[k + 2]);
    lower_bound = std::max(lower_bound, all[k + 3]);
    objective += all[k + 4];
  }
  r->rho = free > 0 ? sum_free / free : (upper_bound + lower_bound) / 2;
  r->objective = objective;
  r->alpha = GatherAlpha();
  r->eliminations = eliminations_;
  r->reconstructions = reconstructions_;
  r->wrongly_eliminated = wrongly_eliminated_;
  r->cache_hits = cache_.hits();
  r->cache_misses = cache_.misses();
  r->seconds = Seconds();
}

}  // namespace

SmoResult SolveSmo(comm::Context& ctx, const KernelMatrix& kernel, std::span<const int8_t> y,
                   const SmoOptions& o) {
  if (!(o.c > 0) || !std::isfinite(o.c))
    throw InvalidArgumentError(fmt::format("C must be positive, not {}", o.c));
  if (!(o.tolerance > 0)) throw InvalidArgumentError("the tolerance must be positive");
  if (y.size() != kernel.rows()) throw InvalidArgumentError("one label per sample");
  bool pos = false, neg = false;
  for (int8_t v : y) {
    if (v != 1 && v != -1) throw InvalidArgumentError("labels must be +1 or -1");
    (v > 0 ? pos : neg) = true;
  }
  if (!pos || !neg) throw InvalidArgumentError("training needs samples of both classes");
  if (!o.start_alpha.empty()) {
    if (o.start_alpha.size() != y.size())
      throw InvalidArgumentError("a warm start needs one multiplier per sample");
    double balance = 0;
    for (size_t t = 0; t < y.size(); ++t) {
      const double a = o.start_alpha[t];
      if (!(a >= 0 && a <= o.c))
        throw InvalidArgumentError(
            fmt::format("warm start: multiplier {} is {}, outside [0, C = {}]", t, a, o.c));
      balance += y[t] * a;
    }
    if (std::abs(balance) > 1e-9 * o.c * static_cast<double>(y.size()))
      throw InvalidArgumentError(fmt::format("warm start: y'a is {:g}, not 0", balance));
  }
  SmoSolver solver(ctx, kernel, y, o);
  return solver.Run();
}

}  // namespace parasol::apps::svm
