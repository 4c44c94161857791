#include "parasol/apps/mtrl/mtrl_solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <random>

#include "parasol/apps/mtrl/mtrl_checkpoint.h"
#include "parasol/apps/mtrl/task_covariance.h"
#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/ps/parameter_server.h"
#include "parasol/ps/worker.h"

namespace parasol::apps::mtrl {

std::vector<double> MtrlModel::Predict(const TaskSet& s) const {
  std::vector<double> out(s.samples());
  for (size_t t = 0; t < s.tasks(); ++t) {
    auto it = std::lower_bound(task_ids.begin(), task_ids.end(), s.task_ids[t]);
    if (it == task_ids.end() || *it != s.task_ids[t])
      throw InvalidArgumentError(fmt::format("task {} is not one the model was trained on", s.task_ids[t]));
    const double* w = weights.data() + static_cast<size_t>(it - task_ids.begin()) * features;
    for (uint64_t j = s.offsets[t]; j < s.offsets[t + 1]; ++j)
      out[j] = std::inner_product(w, w + features, s.row(j), 0.0);
  }
  return out;
}

namespace {

constexpr uint32_t kVTable = 1;

double Dot(const double* a, const double* b, size_t n) { return std::inner_product(a, a + n, b, 0.0); }
void Axpy(double a, const double* x, double* y, size_t n) {
  for (size_t f = 0; f < n; ++f) y[f] += a * x[f];
}

// Tasks [first, last) of this rank: contiguous blocks of about equal sample counts.
std::pair<size_t, size_t> TasksOf(const TaskSet& s, int ranks, int rank) {
  auto owner = [&](size_t t) {
    const double mid = static_cast<double>(s.offsets[t]) + 0.5 * static_cast<double>(s.task_size(t));
    return std::min<size_t>(static_cast<size_t>(ranks) - 1,
                            static_cast<size_t>(ranks * mid / static_cast<double>(s.samples())));
  };
  size_t first = 0;
  while (first < s.tasks() && owner(first) < static_cast<size_t>(rank)) ++first;
  size_t last = first;
  while (last < s.tasks() && owner(last) == static_cast<size_t>(rank)) ++last;
  return {first, last};
}

// Sums over a rank's tasks at weights W.
struct Sums {
  double loss = 0, dual = 0, squared_error = 0, quad = 0, norm = 0;
};

// One rank's half of the weight step: its tasks' samples and dual variables, the whole V (read
// from the parameter server) and Sigma.
class WeightStep {
 public:
  WeightStep(comm::Context& ctx, const TaskSet& s, const MtrlOptions& o)
      : ctx_(ctx),
        s_(s),
        o_(o),
        m_(s.tasks()),
        d_(s.features),
        ps_(ctx, {.workers_per_process = 1, .timeout_ms = o.timeout_ms, .spin_while_waiting = true}) {
    std::tie(first_, last_) = TasksOf(s, ctx.size(), ctx.rank());
    ps_.CreateTable({.id = kVTable,
                     .kind = ps::RowKind::kDense,
                     .dtype = DType::kFloat64,
                     .width = d_,
                     .num_rows = m_,
                     .consistency = o.consistency.model,
                     .staleness = o.consistency.staleness,
                     .vap_threshold = o.consistency.vap_threshold,
                     .refresh_cached_rows = true});
    worker_ = ps_.CreateWorker(0);
    exact_ = o.consistency.model == ps::Consistency::kBsp && ctx.size() > 1;
    alpha_.assign(s.offsets[last_] - s.offsets[first_], 0.0);
    for (uint64_t j = s.offsets[first_]; j < s.offsets[last_]; ++j)
      sq_norm_.push_back(Dot(s.row(j), s.row(j), d_));
    v_.assign(m_ * d_, 0.0);
  }

  // Sigma's rows of this rank's tasks ((last - first) x m), which the local passes use, and the
  // covariance that forms W = Sigma V.
  void SetCovariance(const TaskCovariance& cov) {
    cov_ = cov;
    sigma_ = cov.SigmaRows(o_.lambda1, o_.lambda2, first_, last_);
  }

  // Local passes over this rank's samples, then V's change to the parameter server and V back.
  void Round(uint64_t seed) {
    const size_t own = last_ - first_;
    w_own_.assign(own * d_, 0.0);
    w_own_ = OwnWeights();
    dv_.assign(own * d_, 0.0);
    for (uint64_t pass = 0; pass < o_.local_passes; ++pass) LocalPass(seed * 1000003 + pass);
    auto table = worker_->GetTable<double>(kVTable);
    for (size_t i = first_; i < last_; ++i)
      table.IncRow(i, std::span<const double>(&dv_[(i - first_) * d_], d_));
    worker_->Clock();
    ReadV();
    // The parameter server's BSP lets a read see a faster rank's next round: nobody sends its
    // next change before everyone has read this round's V.
    if (exact_) collective::Barrier(ctx_);
  }

  // Every rank's changes at their shards, then V as it is.
  void SyncAll() {
    worker_->GlobalBarrier();
    ReadV();
    worker_->GlobalBarrier();  // nobody changes V before all have read it
  }

  // W = Sigma V for this rank's tasks ((last - first) x d).
  std::vector<double> OwnWeights() const {
    return cov_.SigmaTimes(o_.lambda1, o_.lambda2, v_, d_, first_, last_);
  }

  // Under BSP a round's read of V is exact (every rank's changes, nothing newer); under a bound
  // it may lag, and the Omega step needs SyncAll's V.
  bool RoundsReadExactV() const { return o_.consistency.model == ps::Consistency::kBsp; }

  // Every task's weights (m x d) from each rank's own and, unless null, *sums summed over the
  // ranks, in one collective: two would double its latency, a good part of an iteration's.
  std::vector<double> GatherWeights(const std::vector<double>& own, Sums* sums) {
    std::vector<double> w(m_ * d_, 0.0);
    std::copy(own.begin(), own.end(), w.begin() + static_cast<int64_t>(first_ * d_));
    if (sums != nullptr)
      w.insert(w.end(), {sums->loss, sums->dual, sums->squared_error, sums->quad, sums->norm});
    if (ctx_.size() > 1) collective::Allreduce<double>(ctx_, std::span<double>(w));
    if (sums != nullptr) {
      const double* s = &w[m_ * d_];
      *sums = {.loss = s[0], .dual = s[1], .squared_error = s[2], .quad = s[3], .norm = s[4]};
      w.resize(m_ * d_);
    }
    return w;
  }

  // Loss, dual objective's per-sample part and squared error of this rank's tasks at their
  // weights, and their parts of tr(V' W) and |W|^2.
  Sums Evaluate(const std::vector<double>& own) const {
    Sums sums;
    for (size_t i = first_; i < last_; ++i) {
      const double* wi = &own[(i - first_) * d_];
      sums.quad += Dot(&v_[i * d_], wi, d_);
      sums.norm += Dot(wi, wi, d_);
      const auto n = static_cast<double>(s_.task_size(i));
      for (uint64_t j = s_.offsets[i]; j < s_.offsets[i + 1]; ++j) {
        const double r = s_.y[j] - Dot(wi, s_.row(j), d_);
        const double a = alpha_[j - s_.offsets[first_]];
        sums.squared_error += r * r;
        sums.loss += r * r / (2 * n);
        sums.dual += a * s_.y[j] - a * a * n / 2;
      }
    }
    return sums;
  }

  const std::vector<double>& v() const { return v_; }
  uint64_t BytesSent() const { return ps_.stats().bytes_out; }
  // This rank's alphas at their places among all samples (zero elsewhere).
  void PlaceAlpha(std::vector<double>* all) const {
    std::copy(alpha_.begin(), alpha_.end(), all->begin() + static_cast<int64_t>(s_.offsets[first_]));
  }
  // Collective: takes this rank's alphas from all samples' and rebuilds V from them.
  void LoadAlpha(const std::vector<double>& all) {
    std::copy(all.begin() + static_cast<int64_t>(s_.offsets[first_]),
              all.begin() + static_cast<int64_t>(s_.offsets[last_]), alpha_.begin());
    auto table = worker_->GetTable<double>(kVTable);
    std::vector<double> vi(d_);
    for (size_t i = first_; i < last_; ++i) {
      std::fill(vi.begin(), vi.end(), 0.0);
      for (uint64_t j = s_.offsets[i]; j < s_.offsets[i + 1]; ++j)
        Axpy(alpha_[j - s_.offsets[first_]], s_.row(j), vi.data(), d_);
      table.IncRow(i, vi);
    }
    worker_->Clock();
    SyncAll();
  }
  void Finish() { ps_.Shutdown(); }

 private:
  void ReadV() {
    auto table = worker_->GetTable<double>(kVTable);
    std::vector<uint64_t> rows(m_);
    std::iota(rows.begin(), rows.end(), 0);
    table.Prefetch(rows);
    for (size_t i = 0; i < m_; ++i) table.Get(i).CopyTo(std::span<double>(&v_[i * d_], d_));
  }

  // Exact ascent on each alpha of this rank's local subproblem, task by task: while a task's
  // samples are visited only its own v changes, so its weights w_i + sigma' sum_k Sigma_ik dv_k
  // are worked out once per task and kept up to date at d operations per sample.
  void LocalPass(uint64_t seed) {
    const double sp = static_cast<double>(ctx_.size());
    std::vector<size_t> tasks(last_ - first_);
    std::iota(tasks.begin(), tasks.end(), first_);
    std::mt19937_64 rng(seed * 1000033 + first_);
    std::shuffle(tasks.begin(), tasks.end(), rng);
    std::vector<double> w(d_);
    std::vector<uint64_t> order;
    for (size_t i : tasks) {
      std::copy_n(&w_own_[(i - first_) * d_], d_, w.begin());
      const double* sigma_i = &sigma_[(i - first_) * m_];
      for (size_t k = first_; k < last_; ++k) Axpy(sp * sigma_i[k], &dv_[(k - first_) * d_], w.data(), d_);
      const auto n = static_cast<double>(s_.task_size(i));
      const double sii = sp * sigma_i[i];
      double* dvi = &dv_[(i - first_) * d_];
      order.resize(s_.task_size(i));
      std::iota(order.begin(), order.end(), s_.offsets[i]);
      std::shuffle(order.begin(), order.end(), rng);
      for (uint64_t j : order) {
        const double* x = s_.row(j);
        double& a = alpha_[j - s_.offsets[first_]];
        const double delta =
            (s_.y[j] - a * n - Dot(x, w.data(), d_)) / (n + sii * sq_norm_[j - s_.offsets[first_]]);
        a += delta;
        Axpy(delta, x, dvi, d_);
        Axpy(sii * delta, x, w.data(), d_);
      }
    }
  }

  comm::Context& ctx_;
  const TaskSet& s_;
  const MtrlOptions& o_;
  const size_t m_, d_;
  size_t first_ = 0, last_ = 0;
  ps::ParameterServer ps_;
  std::unique_ptr<ps::Worker> worker_;
  bool exact_ = false;
  std::vector<double> alpha_, sq_norm_;  // this rank's samples
  TaskCovariance cov_;
  std::vector<double> v_, sigma_;   // m x d; this rank's rows of Sigma, (last - first) x m
  std::vector<double> w_own_, dv_;  // this rank's tasks x d
};

void CheckOptions(const TaskSet& train, const TaskSet* test, const MtrlOptions& o) {
  if (!(o.lambda1 >= 0) || !(o.lambda2 >= 0) || !(o.lambda1 + o.lambda2 > 0) || !std::isfinite(o.lambda1) ||
      !std::isfinite(o.lambda2))
    throw InvalidArgumentError("mtrl: lambda1 and lambda2 must be finite, not negative, and not both 0");
  if (!(o.epsilon > 0) || !std::isfinite(o.epsilon))
    throw InvalidArgumentError("mtrl: epsilon must be positive (it keeps Omega invertible)");
  if (o.iterations == 0 || o.rounds == 0 || o.local_passes == 0 || !(o.tolerance >= 0))
    throw InvalidArgumentError("mtrl: iterations, rounds and local passes must be positive, tolerance >= 0");
  if (train.tasks() == 0 || train.features == 0) throw InvalidArgumentError("mtrl: no tasks to learn");
  if (test != nullptr) {
    if (test->features != train.features)
      throw InvalidArgumentError(fmt::format("mtrl: the test set has {} features, the training set {}",
                                             test->features, train.features));
    for (int64_t id : test->task_ids)
      if (train.IndexOf(id) < 0)
        throw InvalidArgumentError(fmt::format("mtrl: test task {} has no training samples", id));
  }
}

}  // namespace

MtrlResult TrainMtrl(comm::Context& ctx, const TaskSet& train, const TaskSet* test, const MtrlOptions& o,
                     const std::function<void(const MtrlIteration&)>& on_iteration) {
  CheckOptions(train, test, o);
  const auto start = std::chrono::steady_clock::now();
  const size_t m = train.tasks(), d = train.features;
  WeightStep step(ctx, train, o);
  TaskCovariance cov = TaskCovariance::Identity(m);
  MtrlResult result;
  result.model.task_ids = train.task_ids;
  result.model.features = d;
  uint64_t rounds = 0;
  double previous = std::numeric_limits<double>::infinity();
  if (!o.resume_dir.empty()) {
    MtrlCheckpoint c = ReadMtrlCheckpoint(o.resume_dir, m, d, train.samples());
    try {
      cov = TaskCovariance::FromMatrix(c.omega, m);
    } catch (const InvalidArgumentError& e) {
      throw ParseError((std::filesystem::path(o.resume_dir) / "omega.bin").string(), 0, e.what());
    }
    step.LoadAlpha(c.alpha);
    result.first_iteration = c.iteration + 1;
    rounds = c.rounds;
    previous = c.objective;
  }
  step.SetCovariance(cov);
  for (uint64_t it = result.first_iteration; it <= o.iterations; ++it) {
    for (uint64_t r = 0; r < o.rounds; ++r) step.Round((o.seed * 1000003 + it) * 1000033 + r);
    rounds += o.rounds;
    if (!step.RoundsReadExactV()) step.SyncAll();
    const std::vector<double> own = step.OwnWeights();
    Sums sums = step.Evaluate(own);
    const std::vector<double> w = step.GatherWeights(own, &sums);
    const double quad = sums.quad;  // tr(W Sigma^-1 W') = tr(V Sigma V') = tr(V' W)
    MtrlIteration e{.iteration = it, .rounds = rounds};
    e.duality_gap = (sums.loss + quad / 2) - (sums.dual - quad / 2);
    e.train_mse = sums.squared_error / static_cast<double>(train.samples());
    if (o.learn_covariance) {
      cov = TaskCovariance::Fit(w, m, d, o.epsilon);
      const double root = cov.trace_root();
      e.objective = sums.loss + o.lambda1 / 2 * sums.norm + o.lambda2 / 2 * root * root;
      step.SetCovariance(cov);
    } else {
      e.objective = sums.loss + quad / 2 + o.lambda2 * o.epsilon / 2 * cov.TraceInverse();
    }
    result.model.weights = w;
    e.bytes_sent = step.BytesSent();
    e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (ctx.rank() == 0) {
      if (test != nullptr) e.test_explained_variance = ExplainedVariance(*test, result.model.Predict(*test));
      if (on_iteration) on_iteration(e);
    }
    result.iterations.push_back(e);
    const double scale = std::max(std::abs(e.objective), 1e-300);
    result.converged = std::abs(previous - e.objective) <= o.tolerance * scale &&
                       std::abs(e.duality_gap) <= o.tolerance * scale;
    previous = e.objective;
    if (!o.checkpoint_dir.empty() && o.checkpoint_every > 0 &&
        (it % o.checkpoint_every == 0 || result.converged || it == o.iterations)) {
      MtrlCheckpoint c{.iteration = it,
                       .rounds = rounds,
                       .tasks = m,
                       .features = d,
                       .samples = train.samples(),
                       .objective = e.objective};
      c.alpha.assign(train.samples(), 0.0);
      step.PlaceAlpha(&c.alpha);
      if (ctx.size() > 1) collective::Allreduce<double>(ctx, std::span<double>(c.alpha));
      c.omega = cov.Omega();
      if (ctx.rank() == 0) {
        std::error_code ec;
        std::filesystem::create_directories(o.checkpoint_dir, ec);
        if (ec) throw IoError(fmt::format("{}: cannot create: {}", o.checkpoint_dir, ec.message()));
        WriteMtrlCheckpoint(ctx.env().files(), o.checkpoint_dir, c);
      }
      if (ctx.size() > 1) collective::Barrier(ctx);
    }
    if (result.converged) break;
  }
  if (result.iterations.empty())  // resumed with nothing left to do
    result.model.weights = step.GatherWeights(step.OwnWeights(), nullptr);
  result.model.omega = cov.Omega();
  result.bytes_sent = step.BytesSent();
  step.Finish();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parasol::apps::mtrl
