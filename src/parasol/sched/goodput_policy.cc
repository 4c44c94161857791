#include "parasol/sched/goodput_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

#include "parasol/sched/optimus.h"

namespace parasol::sched {

GoodputPolicy::Curve GoodputPolicy::SpeedupCurve(const SimJob& job, const ClusterSpec& cluster) {
  Curve c{{0}, {0.0}};
  const int per_node = cluster.gpus_per_node;
  const int limit = std::min(job.adaptive() ? job.MaxUsefulReplicas() : 1, cluster.nodes * per_node);
  auto model = job.Model();
  const Application& app = job.app();
  double base = 0;
  // 1 .. one node, then whole nodes.
  auto next = [&](int n) { return n < per_node ? n + 1 : n + per_node; };
  for (int n = 1; n <= limit; n = next(n)) {
    double s = n;  // unmeasured: linear (only n = 1 is allowed then)
    if (model) {
      const int nodes = (n + per_node - 1) / per_node;
      const double g = model->Optimize(nodes, n, app.max_batch_size(), app.min_local_bsz(), app.max_local_bsz()).goodput;
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

struct Candidate {
  double gain_per_gpu;
  size_t job;
  size_t to;  // index in the job's curve
  bool operator<(const Candidate& o) const { return gain_per_gpu < o.gain_per_gpu; }
};

// From position `at` on a curve, the next point with the best utility per added GPU (the next
// vertex of the concave envelope).
Candidate NextStep(const std::vector<int>& counts, const std::vector<double>& value, size_t at, size_t job) {
  Candidate best{0, job, at};
  for (size_t k = at + 1; k < counts.size(); ++k) {
    const double g = (value[k] - value[at]) / (counts[k] - counts[at]);
    if (g > best.gain_per_gpu) best = {g, job, k};
  }
  return best;
}

}  // namespace

Allocations GoodputPolicy::Optimize(double now, const std::vector<SimJob*>& active, const Allocations& previous,
                                    const ClusterSpec& cluster) {
  const size_t n = active.size();
  std::vector<Curve> curves(n);
  std::vector<std::vector<double>> value(n);
  std::vector<int> current(n, 0);
  for (size_t j = 0; j < n; ++j) {
    const SimJob& job = *active[j];
    curves[j] = SpeedupCurve(job, cluster);
    if (auto it = previous.find(job.name()); it != previous.end()) current[j] = static_cast<int>(it->second.size());
    const double age = std::min(std::max(0.0, now - job.submit_time()), o_.horizon_s);
    const double stay = current[j] > 0 ? age / (age + o_.restart_penalty_s) : 1.0;
    double weight = o_.service_scale_gpu_s > 0 ? 1.0 / (1.0 + job.attained_service() / o_.service_scale_gpu_s) : 1.0;
    if (o_.remaining_scale_s > 0) {
      // Shortest remaining work first: the epochs left (users declare them) at one GPU's goodput.
      const double left = job.app().Progress(job.app().max_epochs()) - job.progress();
      auto model = job.Model();
      if (model) {
        const Application& app = job.app();
        const double g1 = model->Optimize(1, 1, app.max_batch_size(), app.min_local_bsz(), app.max_local_bsz()).goodput;
        if (g1 > 0) weight = 1.0 / (1.0 + left * app.init_batch_size() / g1 / o_.remaining_scale_s);
      }
    }
    for (size_t k = 0; k < curves[j].counts.size(); ++k) {
      const bool change = current[j] > 0 && curves[j].counts[k] != current[j];
      value[j].push_back(weight * curves[j].speedup[k] * (change ? stay : 1.0));
    }
  }
  // Greedy by marginal value per GPU.
  int free = cluster.nodes * cluster.gpus_per_node;
  std::vector<size_t> at(n, 0);
  std::priority_queue<Candidate> heap;
  for (size_t j = 0; j < n; ++j) heap.push(NextStep(curves[j].counts, value[j], 0, j));
  while (!heap.empty() && free > 0) {
    Candidate c = heap.top();
    heap.pop();
    if (c.gain_per_gpu <= 0 || c.to == at[c.job]) continue;
    const int add = curves[c.job].counts[c.to] - curves[c.job].counts[at[c.job]];
    if (add > free) {  // too big: try the job's smaller steps
      std::vector<int> counts(curves[c.job].counts.begin(), curves[c.job].counts.begin() + static_cast<ptrdiff_t>(c.to));
      std::vector<double> vals(value[c.job].begin(), value[c.job].begin() + static_cast<ptrdiff_t>(c.to));
      Candidate smaller = NextStep(counts, vals, at[c.job], c.job);
      if (smaller.to != at[c.job]) heap.push(smaller);
      continue;
    }
    free -= add;
    at[c.job] = c.to;
    heap.push(NextStep(curves[c.job].counts, value[c.job], at[c.job], c.job));
  }
  // Placement: keep what is unchanged, then the largest new jobs first: distributed ones on whole
  // free nodes plus one partly free node, none sharing a node with another distributed job;
  // single-node ones by best fit. A job that does not fit gets nothing this interval.
  const int per_node = cluster.gpus_per_node;
  std::vector<int> node_free(static_cast<size_t>(cluster.nodes), per_node);
  std::vector<bool> has_distributed(static_cast<size_t>(cluster.nodes), false);
  auto take = [&](const Allocation& a) {
    const bool distributed = PlacementOf(a).size() > 1;
    for (int node : a) {
      --node_free[static_cast<size_t>(node)];
      if (distributed) has_distributed[static_cast<size_t>(node)] = true;
    }
  };
  Allocations alloc;
  std::vector<size_t> pending;
  for (size_t j = 0; j < n; ++j) {
    const int want = curves[j].counts[at[j]];
    auto it = previous.find(active[j]->name());
    if (want > 0 && it != previous.end() && static_cast<int>(it->second.size()) == want) {
      alloc[active[j]->name()] = it->second;
      take(it->second);
    } else if (want > 0) {
      pending.push_back(j);
    }
  }
  std::stable_sort(pending.begin(), pending.end(), [&](size_t a, size_t b) { return curves[a].counts[at[a]] > curves[b].counts[at[b]]; });
  for (size_t j : pending) {
    const int want = curves[j].counts[at[j]];
    Allocation a;
    // Best fit: the node with the least room that still holds `need` (and no distributed job
    // when `exclusive`).
    auto best_fit = [&](int need, bool exclusive) {
      int best = -1;
      for (int node = 0; node < cluster.nodes; ++node) {
        const int f = node_free[static_cast<size_t>(node)];
        if (f < need || (exclusive && has_distributed[static_cast<size_t>(node)])) continue;
        if (best < 0 || f < node_free[static_cast<size_t>(best)]) best = node;
      }
      return best;
    };
    if (want > per_node) {
      for (int node = 0; node < cluster.nodes && want - static_cast<int>(a.size()) >= per_node; ++node) {
        if (node_free[static_cast<size_t>(node)] == per_node) a.insert(a.end(), static_cast<size_t>(per_node), node);
      }
      const int rest = want - static_cast<int>(a.size());
      if (rest >= per_node) continue;
      if (rest > 0) {
        const int node = best_fit(rest, true);
        if (node < 0 || std::find(a.begin(), a.end(), node) != a.end()) continue;
        a.insert(a.end(), static_cast<size_t>(rest), node);
      }
    } else {
      const int node = best_fit(want, false);
      if (node < 0) continue;
      a.assign(static_cast<size_t>(want), node);
    }
    take(a);
    alloc[active[j]->name()] = std::move(a);
  }
  return alloc;
}

}  // namespace parasol::sched
