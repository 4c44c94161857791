#include "parasol/sched/goodput_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "parasol/sched/count_search.h"

namespace parasol::sched {

GoodputPolicy::Curve GoodputPolicy::SpeedupCurve(const Job& job, const ClusterSpec& cluster) {
  Curve c{{0}, {0.0}};
  const int per_node = cluster.gpus_per_node;
  const int limit = std::min(job.adaptive() ? job.MaxUsefulReplicas() : 1, cluster.nodes * per_node);
  auto model = job.Model();
  const BatchLimits b = job.batch_limits();
  double& base = c.one_gpu_goodput;
  // 1 .. one node, then whole nodes.
  auto next = [&](int n) { return n < per_node ? n + 1 : n + per_node; };
  for (int n = 1; n <= limit; n = next(n)) {
    if (!job.AllowsReplicas(n)) continue;
    double s = n;  // unmeasured: linear (only n = 1 is allowed then)
    if (model) {
      const int nodes = (n + per_node - 1) / per_node;
      const double g = model->Optimize(nodes, n, b.max_batch, b.min_local, b.max_local, b.accumulate).goodput;
      if (n == 1) base = g;
      if (g <= 0 || base <= 0) break;
      s = g / base;
    }
    c.counts.push_back(n);
    c.speedup.push_back(s);
  }
  return c;
}

namespace {

// The value of a job's current count when it must keep it: more than any sum of speedups.
constexpr double kKeep = 1e9;

// Placement: jobs whose count is unchanged keep their GPUs; then the largest first: distributed
// jobs on whole free nodes plus at most one partly free node with no other distributed job,
// single-node jobs by best fit. A job that does not fit keeps its previous GPUs when they are
// still free, else takes the largest smaller count on its curve that fits (a job dropped to
// nothing would pay two restarts for one interval of fragmentation).
class Placer {
 public:
  explicit Placer(const ClusterSpec& cluster)
      : per_node_(cluster.gpus_per_node),
        free_(static_cast<size_t>(cluster.nodes), cluster.gpus_per_node),
        has_distributed_(static_cast<size_t>(cluster.nodes), false) {}

  bool Fits(const Allocation& a) const {
    std::map<int, int> need;
    for (int node : a) ++need[node];
    const bool distributed = need.size() > 1;
    for (auto [node, k] : need) {
      const size_t i = static_cast<size_t>(node);
      if (free_[i] < k || (distributed && has_distributed_[i])) return false;
    }
    return true;
  }
  void Take(const Allocation& a) {
    const bool distributed = PlacementOf(a).size() > 1;
    for (int node : a) {
      --free_[static_cast<size_t>(node)];
      if (distributed) has_distributed_[static_cast<size_t>(node)] = true;
    }
  }
  // Where `want` GPUs would go now; empty when they do not fit.
  Allocation Find(int want) const {
    Allocation a;
    if (want <= per_node_) {
      const int node = BestFit(want, false, a);
      if (node >= 0) a.assign(static_cast<size_t>(want), node);
      return a;
    }
    for (size_t node = 0; node < free_.size() && want - static_cast<int>(a.size()) >= per_node_; ++node) {
      if (free_[node] == per_node_) a.insert(a.end(), static_cast<size_t>(per_node_), static_cast<int>(node));
    }
    const int rest = want - static_cast<int>(a.size());
    if (rest >= per_node_) return {};
    if (rest > 0) {
      const int node = BestFit(rest, true, a);
      if (node < 0) return {};
      a.insert(a.end(), static_cast<size_t>(rest), node);
    }
    return a;
  }

 private:
  // The node with the least room that still holds `need` (no distributed job there when
  // `exclusive`; not one of `used`).
  int BestFit(int need, bool exclusive, const Allocation& used) const {
    int best = -1;
    for (size_t node = 0; node < free_.size(); ++node) {
      const int f = free_[node];
      if (f < need || (exclusive && has_distributed_[node])) continue;
      if (std::find(used.begin(), used.end(), static_cast<int>(node)) != used.end()) continue;
      if (best < 0 || f < free_[static_cast<size_t>(best)]) best = static_cast<int>(node);
    }
    return best;
  }

  int per_node_;
  std::vector<int> free_;
  std::vector<bool> has_distributed_;
};

Allocations Place(const std::vector<const Job*>& active, const std::vector<CountChoice>& curves,
                  const std::vector<size_t>& at, const Allocations& previous, const ClusterSpec& cluster) {
  Placer placer(cluster);
  Allocations alloc;
  std::vector<size_t> pending;
  for (size_t j = 0; j < active.size(); ++j) {
    const int want = curves[j].counts[at[j]];
    auto it = previous.find(active[j]->name());
    if (want > 0 && it != previous.end() && static_cast<int>(it->second.size()) == want) {
      alloc[active[j]->name()] = it->second;
      placer.Take(it->second);
    } else if (want > 0) {
      pending.push_back(j);
    }
  }
  std::stable_sort(pending.begin(), pending.end(),
                   [&](size_t a, size_t b) { return curves[a].counts[at[a]] > curves[b].counts[at[b]]; });
  for (size_t j : pending) {
    Allocation a = placer.Find(curves[j].counts[at[j]]);
    if (a.empty()) {
      auto it = previous.find(active[j]->name());
      if (it != previous.end() && placer.Fits(it->second)) a = it->second;
    }
    for (size_t k = at[j]; a.empty() && k-- > 1;) a = placer.Find(curves[j].counts[k]);
    if (a.empty()) continue;
    placer.Take(a);
    alloc[active[j]->name()] = std::move(a);
  }
  return alloc;
}

}  // namespace

double GoodputPolicy::Weight(const Job& job, const Curve& curve) const {
  if (o_.remaining_scale_s > 0) {
    // Shortest remaining work first: the epochs left (users declare them) at one GPU's goodput.
    const double g1 = curve.one_gpu_goodput;
    if (g1 <= 0) return 1.0;
    const double left = job.remaining_iterations() * job.batch_limits().init_batch / g1;
    return 1.0 / (1.0 + left / o_.remaining_scale_s);
  }
  if (o_.service_scale_gpu_s > 0) return 1.0 / (1.0 + job.attained_service() / o_.service_scale_gpu_s);
  return 1.0;
}

Allocations GoodputPolicy::Optimize(double now, const std::vector<const Job*>& active,
                                    const Allocations& previous, const ClusterSpec& cluster) {
  const size_t n = active.size();
  std::vector<CountChoice> choices(n);
  for (size_t j = 0; j < n; ++j) {
    const Job& job = *active[j];
    const Curve curve = SpeedupCurve(job, cluster);
    int current = 0;
    if (auto it = previous.find(job.name()); it != previous.end())
      current = static_cast<int>(it->second.size());
    // A new allocation holds at most until the job ends: a job that would finish at its current
    // count before a restart paid off keeps it.
    double hold = std::min(std::max({0.0, now - job.submit_time(), o_.min_hold_s}), o_.horizon_s);
    double left_s = std::numeric_limits<double>::infinity();  // at its current count
    if (current > 0 && curve.one_gpu_goodput > 0) {
      const auto at = std::find(curve.counts.begin(), curve.counts.end(), current);
      if (at != curve.counts.end() && curve.speedup[at - curve.counts.begin()] > 0) {
        const double goodput = curve.one_gpu_goodput * curve.speedup[at - curve.counts.begin()];
        left_s = job.remaining_iterations() * job.batch_limits().init_batch / goodput;
        hold = std::min(hold, left_s);
      }
    }
    const double penalty = std::max(o_.restart_penalty_s, job.measured_restart_s());
    if (left_s < penalty) {
      // Done before a restart would be: any change ends it later, and its GPUs are free soon. (A
      // sum of speedups would take them for another job's first GPU when its own gain is small.)
      choices[j] = {{0, current}, {0.0, kKeep}};
      continue;
    }
    const double stay = current > 0 ? hold / (hold + penalty) : 1.0;
    const double weight = Weight(job, curve);
    choices[j].counts = curve.counts;
    for (size_t k = 0; k < curve.counts.size(); ++k) {
      const bool change = current > 0 && curve.counts[k] != current;
      choices[j].value.push_back(weight * curve.speedup[k] * (change ? stay : 1.0));
    }
  }
  const int gpus = cluster.nodes * cluster.gpus_per_node;
  const std::vector<size_t> at = o_.exact_search ? ExactCounts(choices, gpus) : GreedyCounts(choices, gpus);
  return Place(active, choices, at, previous, cluster);
}

}  // namespace parasol::sched
