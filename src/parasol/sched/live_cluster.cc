#include "parasol/sched/live_cluster.h"
#include "parasol/core/plural.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "parasol/core/error.h"
#include "parasol/core/subprocess.h"

namespace parasol::sched {
namespace {

// An in-place batch change costs a step's flush, but the model's goodput is a fit: smaller
// predicted gains are noise that would flip the batch back and forth.
constexpr double kMinBatchGain = 1.05;

bool Finished(const LiveJob& j) {
  return j.state() == LiveJob::State::kDone || j.state() == LiveJob::State::kFailed;
}

class LiveRun {
 public:
  LiveRun(const std::vector<LiveJobSpec>& specs, Policy& policy, const LiveOptions& o)
      : policy_(policy),
        o_(o),
        env_(o.env),
        clock_(env_.clock()),
        origin_(clock_.Now()),
        multi_host_(!o.hosts.empty()),
        hosts_(o.hosts) {
    for (const LiveJobSpec& s : specs) {
      if (!o.adaptive && s.replicas > Capacity()) {
        throw InvalidArgumentError(
            fmt::format("job {} asks for {} GPUs; the cluster has {}", s.name, s.replicas, Capacity()));
      }
      jobs_.push_back(std::make_unique<LiveJob>(s, o.launch, o.adaptive, clock_, origin_));
    }
  }

  LiveResult Run() {
    double last_schedule = -1e300, last_rebatch = -1e300;
    std::set<std::string> last_active;
    while (!std::all_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return Finished(*j); })) {
      for (auto& j : jobs_) Poll(*j);
      if (multi_host_) CheckHosts(), RetryLostHosts();
      const double now = Now();
      if (o_.timeout_s > 0 && now > o_.timeout_s) throw TimeoutError(Unfinished());
      if (now - last_rebatch >= o_.rebatch_interval_s) ChangeBatches(), last_rebatch = now;
      std::vector<const Job*> active;
      std::set<std::string> names;
      for (auto& j : jobs_) {
        if (j->submit_time() <= now && !Finished(*j)) active.push_back(j.get()), names.insert(j->name());
      }
      // A round waits while a run is starting up: stopping it then would throw its start-up away
      // (the trainer can only stop after a step).
      const bool due = names != last_active || now - last_schedule >= o_.interval_s || hosts_changed_ ||
                       MeasuredNewCount();
      if (!active.empty() && due && !AnyStarting()) {
        std::erase_if(current_, [&](const auto& kv) { return !names.contains(kv.first); });
        current_ = policy_.Optimize(now, active, current_, Cluster());
        hosts_changed_ = false;
        for (const auto& j : jobs_) counts_seen_[j->name()] = j->max_ranks_measured();
        Apply();
        last_schedule = now;
        last_active = std::move(names);
      }
      clock_.SleepFor(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(o_.poll_s)));
    }
    return Result();
  }

 private:
  double Now() const { return std::chrono::duration<double>(clock_.Now() - origin_).count(); }

  int Capacity() const { return multi_host_ ? static_cast<int>(hosts_.size()) * hosts_[0].slots : o_.gpus; }
  ClusterSpec Cluster() const {
    return multi_host_ ? ClusterSpec{static_cast<int>(hosts_.size()), hosts_[0].slots}
                       : ClusterSpec{1, o_.gpus};
  }

  // Under a policy that chooses counts: a job has measured a GPU count it had not run before, so
  // the last round's model of it was a guess (a new job runs on one GPU until it has measured it,
  // and would otherwise wait a whole interval there with GPUs free).
  bool MeasuredNewCount() const {
    if (!o_.adaptive) return false;
    return std::any_of(jobs_.begin(), jobs_.end(), [&](const auto& j) {
      const auto it = counts_seen_.find(j->name());
      return j->max_ranks_measured() != (it == counts_seen_.end() ? 0 : it->second);
    });
  }

  bool AnyStarting() const {
    return std::any_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return j->starting(); });
  }

  void Log(const std::string& line) {
    if (o_.log) *o_.log << fmt::format("{:8.1f} s  {}\n", Now(), line) << std::flush;
  }

  void ChangeBatches() {
    for (auto& j : jobs_) {
      if (const std::optional<int> b = j->BetterBatch(kMinBatchGain)) j->ChangeBatch(*b);
    }
  }

  void Poll(LiveJob& j) {
    const bool was_running = j.state() == LiveJob::State::kRunning;
    const int batch = j.batch();
    j.Poll();
    if (!was_running) return;
    if (j.state() == LiveJob::State::kRunning && j.batch() != batch) {
      Log(fmt::format("{}: batch {} -> {} in place at step {}", j.name(), batch, j.batch(), j.steps_done()));
    }
    if (j.state() == LiveJob::State::kDone)
      Log(fmt::format("{}: done after {} steps", j.name(), j.steps_done()));
    if (j.state() != LiveJob::State::kFailed) return;
    if (multi_host_) {
      suspects_.push_back(&j);  // its host may be gone: logged once the hosts are checked
    } else {
      Log(j.failure());
    }
  }

  // Probes the hosts of the runs that failed since the last call and of those stalled (each at
  // most once per stall timeout); a host that does not answer is lost.
  void CheckHosts() {
    std::set<std::string> probe;
    for (const LiveJob* j : suspects_) {
      for (const auto& [host, ranks] : j->hosts()) probe.insert(host);
    }
    for (const auto& j : jobs_) {
      double& last = last_probe_[j->name()];
      if (j->stalled_s() < o_.stall_timeout_s || Now() - last < o_.stall_timeout_s) continue;
      last = Now();
      Log(fmt::format("{}: no new step for {:.0f} s; probing its hosts", j->name(), j->stalled_s()));
      for (const auto& [host, ranks] : j->hosts()) probe.insert(host);
    }
    for (const std::string& host : probe) {
      if (const std::string why = Probe(host); !why.empty()) LoseHost(host, why);
    }
    for (const LiveJob* j : suspects_) {
      if (j->state() == LiveJob::State::kFailed) Log(j->failure());
    }
    suspects_.clear();
  }

  std::string ProbeLog() const { return (std::filesystem::path(o_.launch.work_dir) / "probe.log").string(); }

  // The launcher starting `true` on `host`.
  std::unique_ptr<Subprocess> StartProbe(const std::string& host) const {
    std::vector<std::string> argv = o_.launch.mpirun;
    argv.insert(argv.end(), {"--host", host + ":1", "-np", "1", "true"});
    return std::make_unique<Subprocess>(argv, ProbeLog(), o_.launch.env);
  }

  // Empty when the launcher started a process on `host` by the probe's deadline; else what happened.
  std::string Probe(const std::string& host) const {
    const std::optional<int> code =
        StartProbe(host)->Wait(Deadline::After(std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(o_.host_probe_timeout_s))));
    if (!code) return fmt::format("no process started there within {:.0f} s", o_.host_probe_timeout_s);
    if (*code != 0)
      return fmt::format("starting a process there failed with status {} (see {})", *code, ProbeLog());
    return "";
  }

  // Probes each lost host every host_retry_s without blocking the loop (a probe runs while jobs
  // are polled); one that answers rejoins the cluster as its last node, so the node indices of
  // the current allocations stay valid.
  void RetryLostHosts() {
    if (o_.host_retry_s <= 0) return;
    for (auto it = lost_.begin(); it != lost_.end();) {
      LostHost& l = *it;
      const double now = Now();
      if (!l.probe) {
        if (now >= l.next_probe_s) l.probe = StartProbe(l.host.name), l.probe_started_s = now;
        ++it;
        continue;
      }
      const std::optional<int> code = l.probe->Poll();
      if (!code && now - l.probe_started_s < o_.host_probe_timeout_s) {
        ++it;
        continue;
      }
      l.probe.reset();  // ends a probe past its deadline
      if (!code || *code != 0) {
        l.next_probe_s = now + o_.host_retry_s;
        ++it;
        continue;
      }
      hosts_.push_back(l.host);
      returned_hosts_.push_back(l.host.name);
      hosts_changed_ = true;
      Log(fmt::format("host {} is back: it takes jobs again", l.host.name));
      it = lost_.erase(it);
    }
  }

  // Requeues the jobs with ranks on `host`, takes it out of the cluster, and fails the fixed-count
  // jobs that no longer fit.
  void LoseHost(const std::string& host, const std::string& why) {
    const auto at = std::find_if(hosts_.begin(), hosts_.end(), [&](const Host& h) { return h.name == host; });
    if (at == hosts_.end()) return;
    const int lost = static_cast<int>(at - hosts_.begin());
    lost_.push_back({*at, Now() + o_.host_retry_s});
    hosts_.erase(at);
    lost_hosts_.push_back(host);
    hosts_changed_ = true;
    Log(fmt::format("host {} lost: {}", host, why));
    for (auto& j : jobs_) {
      const bool on =
          std::any_of(j->hosts().begin(), j->hosts().end(), [&](const auto& h) { return h.first == host; });
      const bool suspect = std::find(suspects_.begin(), suspects_.end(), j.get()) != suspects_.end();
      if (!on || !(j->state() == LiveJob::State::kRunning || suspect)) continue;
      j->Requeue();
      current_.erase(j->name());
      Log(fmt::format("{}: lost with host {}; queued again, resumes from its last checkpoint", j->name(),
                      host));
    }
    for (auto& [name, alloc] : current_) {
      for (int& node : alloc) node -= node > lost ? 1 : 0;
    }
    if (hosts_.empty())
      throw UnavailableError(fmt::format("parasol cluster: every host is lost (last {})", host));
    for (auto& j : jobs_) {
      if (Finished(*j) || j->adaptive() || j->requested_replicas() <= Capacity()) continue;
      j->Abandon(fmt::format("job {}: asks for {} GPUs; after losing host {} the cluster has {}", j->name(),
                             j->requested_replicas(), host, Capacity()));
      Log(j->failure());
    }
  }

  // The hosts of an allocation, with its ranks on each.
  HostRanks HostsOf(const Allocation& alloc) const {
    HostRanks hosts;
    for (size_t i = 0; i < alloc.size(); ++i) {
      if (i == 0 || alloc[i] != alloc[i - 1])
        hosts.emplace_back(hosts_[static_cast<size_t>(alloc[i])].name, 0);
      ++hosts.back().second;
    }
    return hosts;
  }

  // Stops every job whose count changes (all first, so no core is shared), then starts the jobs
  // with GPUs and no run.
  void Apply() {
    auto want = [&](const LiveJob& j) {
      auto it = current_.find(j.name());
      return it == current_.end() ? 0 : static_cast<int>(it->second.size());
    };
    for (auto& j : jobs_) {
      if (j->state() != LiveJob::State::kRunning || want(*j) == j->ranks()) continue;
      // Announced once it has taken effect: a job may finish before it sees the stop.
      const int from = j->ranks();
      j->Stop(Deadline::After(std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(o_.stop_timeout_s))));
      if (j->state() == LiveJob::State::kDone) {
        Log(fmt::format("{}: done after {} steps (before its resize to {})", j->name(), j->steps_done(),
                        Count(want(*j), "GPU")));
      } else if (j->state() == LiveJob::State::kFailed) {
        Log(j->failure());
      } else {
        Log(fmt::format("{}: {} -> {} GPUs, stopped at step {}", j->name(), from, want(*j), j->steps_done()));
      }
    }
    for (auto& j : jobs_) {
      if (j->state() != LiveJob::State::kWaiting || want(*j) == 0) continue;
      const bool first = j->restarts() < 0;
      j->Start(want(*j), multi_host_ ? HostsOf(current_.at(j->name())) : HostRanks{});
      std::string batch = j->adaptive_batch() ? fmt::format(", batch {}", j->batch()) : "";
      if (multi_host_) {
        std::string where;
        for (const auto& [host, ranks] : j->hosts())
          where += fmt::format("{}{}:{}", where.empty() ? "" : " ", host, ranks);
        batch += fmt::format(" ({})", where);
      }
      Log(first ? fmt::format("{}: starts on {}{}", j->name(), Count(want(*j), "GPU"), batch)
                : fmt::format("{}: resumes on {} {}{}", j->name(), Count(want(*j), "GPU"),
                              j->steps_known() ? fmt::format("at step {}", j->steps_done())
                                               : std::string("from its last checkpoint"),
                              batch));
    }
  }

  std::string Unfinished() const {
    std::string names;
    for (const auto& j : jobs_) {
      if (!Finished(*j))
        names += fmt::format(" {} (at step {}, {:.0f} iterations left)", j->name(), j->steps_done(),
                             j->remaining_iterations());
    }
    return fmt::format("parasol cluster: not finished after {:.0f} s:{}", o_.timeout_s, names);
  }

  LiveResult Result() const {
    LiveResult r;
    r.lost_hosts = lost_hosts_;
    r.returned_hosts = returned_hosts_;
    std::vector<double> jcts;
    for (const auto& j : jobs_) {
      LiveJobResult jr{j->name(),
                       j->submit_time(),
                       j->completion_time().value_or(0),
                       std::max(0, j->restarts()),
                       j->restart_seconds(),
                       j->attained_service()};
      if (j->state() == LiveJob::State::kFailed) r.failures.push_back(j->failure());
      if (j->completion_time()) {
        jcts.push_back(jr.jct());
        r.makespan = std::max(r.makespan, jr.completion_time);
      }
      r.jobs.push_back(jr);
    }
    if (!jcts.empty()) {
      for (double t : jcts) r.average_jct += t / static_cast<double>(jcts.size());
      r.max_jct = *std::max_element(jcts.begin(), jcts.end());
    }
    return r;
  }

  Policy& policy_;
  const LiveOptions& o_;
  Env env_;
  Clock& clock_;  // env_'s
  Clock::TimePoint origin_;
  std::vector<std::unique_ptr<LiveJob>> jobs_;
  Allocations current_;  // node indices into hosts_ (0: this machine, without hosts)
  const bool multi_host_;
  std::vector<Host> hosts_;  // those not lost
  struct LostHost {
    Host host;
    double next_probe_s = 0;
    double probe_started_s = 0;
    std::unique_ptr<Subprocess> probe;  // while one runs
  };
  std::vector<LostHost> lost_;
  std::vector<std::string> lost_hosts_, returned_hosts_;  // in the order it happened
  bool hosts_changed_ = false;                            // since the last schedule
  std::vector<LiveJob*> suspects_;                        // runs failed since the last host check
  std::map<std::string, double> last_probe_;
  std::map<std::string, int> counts_seen_;  // each job's max_ranks_measured() at the last round
};

}  // namespace

LiveResult RunLive(const std::vector<LiveJobSpec>& specs, Policy& policy, const LiveOptions& options) {
  return LiveRun(specs, policy, options).Run();
}

}  // namespace parasol::sched
