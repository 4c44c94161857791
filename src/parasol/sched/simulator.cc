#include "parasol/sched/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "parasol/core/csv_reader.h"
#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol::sched {

namespace fs = std::filesystem;

std::vector<WorkloadJob> ReadWorkload(const std::string& path) {
  std::vector<WorkloadJob> jobs;
  const long last = ReadCsvRecords(
      path, "name,time,application,num_replicas,batch_size", 5,
      [&](long lineno, const std::vector<std::string>& cells) {
        WorkloadJob j;
        j.name = cells[0];
        j.application = cells[2];
        j.submit_time = ParseFieldIn<double>(cells[1], path, lineno, "time (s)", 0, kMaxSubmitSeconds);
        j.replicas = ParseFieldIn<int>(cells[3], path, lineno, "num_replicas", 1, 1 << 20);
        j.batch_size = ParseFieldIn<int>(cells[4], path, lineno, "batch_size", 1, 1 << 30);
        if (j.name.empty() || j.application.empty())
          throw ParseError(path, lineno, "empty name or application");
        jobs.push_back(std::move(j));
      });
  if (jobs.empty()) throw ParseError(path, last, "no jobs");
  return jobs;
}

const Application& ApplicationSet::Get(const std::string& name) {
  auto& slot = apps_[name];
  if (!slot) {
    const fs::path dir = fs::path(dir_) / name;
    if (!fs::is_directory(dir))
      throw IoError(fmt::format("{}: no profile for application '{}'", dir.string(), name));
    slot = std::make_unique<Application>(Application::Load(dir.string()));
  }
  return *slot;
}

namespace {

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// Capacity is a hard limit (a policy that breaks it is a bug); nodes hosting two distributed
// jobs are counted (Tiresias and Optimus, as published, do not avoid them).
void CheckAllocations(const Allocations& next, const ClusterSpec& cluster, const std::string& policy,
                      double now, int64_t& distributed_rule_broken) {
  std::vector<int> used(static_cast<size_t>(cluster.nodes), 0),
      distributed(static_cast<size_t>(cluster.nodes), 0);
  for (const auto& [n, a] : next) {
    const bool spans = PlacementOf(a).size() > 1;
    std::vector<int> nodes;
    for (int node : a) {
      if (node < 0 || node >= cluster.nodes || ++used[static_cast<size_t>(node)] > cluster.gpus_per_node) {
        throw InternalError(fmt::format("policy {} over-allocated node {} at time {}", policy, node, now));
      }
      if (spans && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
    for (int node : nodes) distributed_rule_broken += ++distributed[static_cast<size_t>(node)] == 2;
  }
}

}  // namespace

SimResult SimulateCluster(const std::vector<WorkloadJob>& workload, ApplicationSet& apps, Policy& policy,
                          const SimOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<SimJob> jobs;
  jobs.reserve(workload.size());
  for (const WorkloadJob& w : workload) {
    const bool adaptive = o.adaptive_batch && !o.fixed_batch_applications.contains(w.application);
    jobs.emplace_back(w.name, &apps.Get(w.application), w.submit_time, w.replicas,
                      adaptive ? 0 : w.batch_size);
  }
  SimResult result;
  Allocations current;
  double now = 0;
  auto done = [&] {
    return std::all_of(jobs.begin(), jobs.end(),
                       [](const SimJob& j) { return j.completion_time().has_value(); });
  };
  while (!done()) {
    for (SimJob& j : jobs) j.Step(o.interval_s);
    now += o.interval_s;
    std::vector<SimJob*> active;
    for (SimJob& j : jobs) {
      if (j.submit_time() <= now && !j.completion_time()) active.push_back(&j);
    }
    if (active.empty()) continue;
    std::erase_if(current, [&](const auto& kv) {
      return std::none_of(active.begin(), active.end(),
                          [&](const SimJob* j) { return j->name() == kv.first; });
    });
    const auto t0 = std::chrono::steady_clock::now();
    Allocations next =
        policy.Optimize(now, std::vector<const Job*>(active.begin(), active.end()), current, o.cluster);
    result.scheduling_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CheckAllocations(next, o.cluster, policy.name(), now, result.distributed_rule_broken);
    for (SimJob* j : active) {
      auto was = current.find(j->name());
      auto is = next.find(j->name());
      const Allocation empty;
      const Allocation& before = was == current.end() ? empty : was->second;
      const Allocation& after = is == next.end() ? empty : is->second;
      if (before != after) {
        j->Reallocate(PlacementOf(after), o.restart_penalty_s);
        result.restart_gpu_s += o.restart_penalty_s * static_cast<double>(after.size());
      }
      result.allocated_gpu_s += o.interval_s * static_cast<double>(after.size());
      if (after.empty()) result.waiting_job_s += o.interval_s;
    }
    current = std::move(next);
  }
  std::vector<double> jcts;
  for (const SimJob& j : jobs) {
    JobResult r{j.name(), j.app().name(), j.submit_time(), *j.completion_time(), std::max(0, j.restarts())};
    jcts.push_back(r.jct());
    result.makespan = std::max(result.makespan, r.completion_time);
    result.jobs.push_back(std::move(r));
  }
  double sum = 0;
  for (double v : jcts) sum += v;
  result.average_jct = sum / static_cast<double>(jcts.size());
  result.p99_jct = Percentile(jcts, 0.99);
  result.max_jct = *std::max_element(jcts.begin(), jcts.end());
  result.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parasol::sched
