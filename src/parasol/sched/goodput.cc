#include "parasol/sched/goodput.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <utility>
#include <vector>

namespace parasol::sched {

namespace {

double SyncTime(const PerfParams& p, int nodes, int replicas) {
  if (replicas <= 1) return 1e-8;
  const double retro = std::max(replicas - 2, 0) + 1e-8;
  return nodes > 1 ? p.alpha_n + p.beta_n * retro : p.alpha_r + p.beta_r * retro;
}

double OverlapTime(const PerfParams& p, double compute, double sync) {
  return std::pow(std::pow(compute, p.gamma) + std::pow(sync, p.gamma), 1.0 / p.gamma);
}

// The fitted form alone: `accum_steps` passes, then one overlapping synchronisation.
double FormStepTime(const PerfParams& p, int nodes, int replicas, double atomic_bsz, int accum_steps) {
  const double compute = p.alpha_c + p.beta_c * atomic_bsz;
  return accum_steps * compute + OverlapTime(p, compute, SyncTime(p, nodes, replicas));
}

constexpr int kParams = 7;
using Vec = std::array<double, kParams>;

PerfParams FromVec(const Vec& v) { return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]}; }

struct FitProblem {
  std::span<const PerfObservation> obs;
  Vec lower, upper;

  Vec Clamp(Vec v) const {
    for (int i = 0; i < kParams; ++i) v[i] = std::clamp(v[i], lower[i], upper[i]);
    return v;
  }
  double Objective(const Vec& raw) const {
    const PerfParams p = FromVec(Clamp(raw));
    double e1 = 0, e2 = 0;
    for (const PerfObservation& o : obs) {
      const double c = p.alpha_c + p.beta_c * o.atomic_bsz;
      const double s = OverlapTime(p, c, SyncTime(p, o.nodes, o.replicas));
      e1 += std::pow(std::log(c) - std::log(o.compute_time), 2);
      e2 += std::pow(std::log(s) - std::log(o.step_time), 2);
    }
    const double n = static_cast<double>(obs.size());
    return std::sqrt(e1 / n) + std::sqrt(e2 / n) + 1e-3 * std::pow(p.gamma - 1, 2) +
           1e-2 * (std::pow(p.beta_n / p.alpha_n, 2) + std::pow(p.beta_r / p.alpha_r, 2));
  }
};

// Nelder-Mead over the box (points clamped into it), from `start`.
Vec Minimise(const FitProblem& f, Vec start, int iterations) {
  std::array<Vec, kParams + 1> s;
  std::array<double, kParams + 1> val;
  s[0] = f.Clamp(start);
  for (int i = 0; i < kParams; ++i) {
    s[i + 1] = s[0];
    const double span = f.upper[i] - f.lower[i];
    if (span <= 0) continue;
    s[i + 1][i] = std::min(f.upper[i], s[0][i] + std::max(0.5 * std::fabs(s[0][i]), std::min(span, 1e-3)));
  }
  for (int i = 0; i <= kParams; ++i) val[i] = f.Objective(s[i]);
  for (int it = 0; it < iterations; ++it) {
    std::array<int, kParams + 1> order;
    for (int i = 0; i <= kParams; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return val[a] < val[b]; });
    const int best = order[0], worst = order[kParams], second = order[kParams - 1];
    Vec centre{};
    for (int i = 0; i <= kParams; ++i) {
      if (i == worst) continue;
      for (int d = 0; d < kParams; ++d) centre[d] += s[i][d] / kParams;
    }
    auto along = [&](double t) {
      Vec v;
      for (int d = 0; d < kParams; ++d) v[d] = centre[d] + t * (s[worst][d] - centre[d]);
      return f.Clamp(v);
    };
    Vec r = along(-1.0);
    double fr = f.Objective(r);
    if (fr < val[best]) {
      Vec e = along(-2.0);
      double fe = f.Objective(e);
      s[worst] = fe < fr ? e : r, val[worst] = std::min(fe, fr);
    } else if (fr < val[second]) {
      s[worst] = r, val[worst] = fr;
    } else {
      Vec c = along(0.5);
      double fc = f.Objective(c);
      if (fc < val[worst]) {
        s[worst] = c, val[worst] = fc;
      } else {
        for (int i = 0; i <= kParams; ++i) {
          if (i == best) continue;
          for (int d = 0; d < kParams; ++d) s[i][d] = s[best][d] + 0.5 * (s[i][d] - s[best][d]);
          s[i] = f.Clamp(s[i]);
          val[i] = f.Objective(s[i]);
        }
      }
    }
  }
  int best = 0;
  for (int i = 1; i <= kParams; ++i) best = val[i] < val[best] ? i : best;
  return f.Clamp(s[best]);
}

// Least squares of compute time on batch per rank, both coefficients at least 1e-8.
std::pair<double, double> ComputeLine(std::span<const PerfObservation> obs) {
  double mx = 0, my = 0;
  for (const PerfObservation& o : obs) mx += o.atomic_bsz, my += o.compute_time;
  mx /= static_cast<double>(obs.size()), my /= static_cast<double>(obs.size());
  double sxy = 0, sxx = 0;
  for (const PerfObservation& o : obs) {
    sxy += (o.atomic_bsz - mx) * (o.compute_time - my);
    sxx += (o.atomic_bsz - mx) * (o.atomic_bsz - mx);
  }
  const double beta = sxx > 0 ? std::max(1e-8, sxy / sxx) : 1e-8;
  return {std::max(1e-8, my - beta * mx), beta};
}

}  // namespace

PerfParams FitPerfParams(std::span<const PerfObservation> obs) {
  FitProblem f{obs, {1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1.0}, {1e9, 1e9, 1e9, 1e9, 1e9, 1e9, 10.0}};
  Vec start{1e-1, 1e-2, 1e-1, 1e-2, 1e-1, 1e-2, 1.0 + 1e-3};
  bool one_bsz = true, multi_node = false, single_node_multi = false, above_two = false;
  double mean_compute = 0;
  for (const PerfObservation& o : obs) {
    one_bsz = one_bsz && o.atomic_bsz == obs[0].atomic_bsz;
    multi_node = multi_node || o.nodes > 1;
    single_node_multi = single_node_multi || (o.nodes == 1 && o.replicas > 1);
    above_two = above_two || o.replicas > 2;
    mean_compute += o.compute_time / static_cast<double>(obs.size());
  }
  auto fix = [&](int i, double v) { start[i] = f.lower[i] = f.upper[i] = v; };
  if (one_bsz) fix(0, mean_compute / 2);
  if (!multi_node) fix(2, 1e-8), fix(3, 1e-8);
  if (!single_node_multi) fix(4, 1e-8), fix(5, 1e-8);
  if (!above_two) fix(3, 1e-8), fix(5, 1e-8);
  // Nelder-Mead from two points, the better kept: the neutral start, and the compute line through
  // the data. From the neutral one alone a job's few batches on one rank (milliseconds a step) can
  // leave beta_c on its bound: a flat compute time that makes every larger batch look free.
  Vec data_start = start;
  const auto [alpha_c, beta_c] = ComputeLine(obs);
  if (!one_bsz) data_start[0] = alpha_c;
  data_start[1] = one_bsz ? std::max(1e-8, mean_compute / 2 / obs[0].atomic_bsz) : beta_c;
  Vec best = start;
  for (const Vec& from : {start, data_start}) {
    Vec v = Minimise(f, from, 400);
    v = Minimise(f, v, 400);  // restart: Nelder-Mead stalls on flat valleys
    if (from == start || f.Objective(v) < f.Objective(best)) best = v;
  }
  PerfParams p = FromVec(best);
  if (!multi_node) {  // a prior: crossing nodes costs at least what staying on one does
    p.alpha_n = std::max(p.alpha_n, p.alpha_r * 1.1);
    p.beta_n = std::max(p.beta_n, p.beta_r * 1.1);
  }
  return p;
}

GoodputModel::Corrections GoodputModel::MeasuredCorrections(const PerfParams& perf,
                                                            std::span<const PerfObservation> observations) {
  Corrections c;
  for (const PerfObservation& o : observations) {
    const double modelled = FormStepTime(perf, o.nodes, o.replicas, o.atomic_bsz, 0);
    c[{o.nodes, o.replicas}].emplace_back(o.atomic_bsz, std::log(o.step_time / modelled));
  }
  for (auto& [shape, v] : c) std::sort(v.begin(), v.end());
  return c;
}

double GoodputModel::StepTime(int nodes, int replicas, double atomic_bsz, int accum_steps) const {
  const double t = FormStepTime(p_, nodes, replicas, atomic_bsz, accum_steps);
  auto it = corrections_.find({nodes, replicas});
  if (it == corrections_.end()) return t;
  const auto& v = it->second;
  auto hi = std::lower_bound(v.begin(), v.end(), std::make_pair(atomic_bsz, -1e300));
  if (hi == v.begin()) return t * std::exp(hi->second);
  if (hi == v.end()) return t * std::exp(v.back().second);
  const auto lo = std::prev(hi);
  const double f = std::log(atomic_bsz / lo->first) / std::log(hi->first / lo->first);
  return t * std::exp(lo->second + f * (hi->second - lo->second));
}

double GoodputModel::Throughput(int nodes, int replicas, double atomic_bsz, int accum_steps) const {
  return replicas * atomic_bsz * (accum_steps + 1) / StepTime(nodes, replicas, atomic_bsz, accum_steps);
}

double GoodputModel::Efficiency(double batch) const {
  const double scale = batch / init_batch_;
  return AdaScaleGain(sqr_, var_, scale) / scale;
}

GoodputModel::Choice GoodputModel::Optimize(int nodes, int replicas, int max_batch, int min_atomic,
                                            int max_atomic, bool accumulate) const {
  Choice best;
  const double lo = std::max<double>(init_batch_, static_cast<double>(min_atomic) * replicas);
  // Without accumulation, one pass per GPU bounds the batch.
  const double hi =
      accumulate ? max_batch : std::min<double>(max_batch, static_cast<double>(max_atomic) * replicas);
  if (lo > hi) return best;
  constexpr int kSamples = 50;
  for (int i = 0; i < kSamples; ++i) {
    const double batch = lo * std::pow(hi / lo, i / static_cast<double>(kSamples - 1));
    const double local = batch / replicas;
    const bool two_passes = accumulate && replicas == 1 && local > init_batch_ + 1e-8;
    const auto [atomic, accum] = SplitLocalBatch(local, max_atomic, two_passes);
    if (atomic < min_atomic || atomic > max_atomic || (!accumulate && accum > 0)) continue;
    const double g = Goodput(nodes, replicas, atomic, accum);
    if (g > best.goodput) best = {g, atomic, accum};
  }
  return best;
}

}  // namespace parasol::sched
