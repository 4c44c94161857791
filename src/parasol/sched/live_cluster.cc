#include "parasol/sched/live_cluster.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "parasol/core/error.h"

namespace parasol::sched {
namespace {

using Clock = Deadline::Clock;

bool Finished(const LiveJob& j) { return j.state() == LiveJob::State::kDone || j.state() == LiveJob::State::kFailed; }

class LiveRun {
 public:
  LiveRun(const std::vector<LiveJobSpec>& specs, Policy& policy, const LiveOptions& o)
      : policy_(policy), o_(o), origin_(Clock::now()) {
    for (const LiveJobSpec& s : specs) {
      if (!o.adaptive && s.replicas > o.gpus) {
        throw InvalidArgumentError(fmt::format("job {} asks for {} GPUs; the cluster has {}", s.name, s.replicas, o.gpus));
      }
      jobs_.push_back(std::make_unique<LiveJob>(s, o.launch, o.adaptive, origin_));
    }
  }

  LiveResult Run() {
    double last_schedule = -1e300;
    std::set<std::string> last_active;
    while (!std::all_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return Finished(*j); })) {
      for (auto& j : jobs_) Poll(*j);
      const double now = Now();
      if (o_.timeout_s > 0 && now > o_.timeout_s) throw TimeoutError(Unfinished());
      std::vector<const Job*> active;
      std::set<std::string> names;
      for (auto& j : jobs_) {
        if (j->submit_time() <= now && !Finished(*j)) active.push_back(j.get()), names.insert(j->name());
      }
      // A round waits while a run is starting up: stopping it then would throw its start-up away
      // (the trainer can only stop after a step).
      const bool due = names != last_active || now - last_schedule >= o_.interval_s;
      if (!active.empty() && due && !AnyStarting()) {
        std::erase_if(current_, [&](const auto& kv) { return !names.contains(kv.first); });
        current_ = policy_.Optimize(now, active, current_, ClusterSpec{1, o_.gpus});
        Apply();
        last_schedule = now;
        last_active = std::move(names);
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(o_.poll_s));
    }
    return Result();
  }

 private:
  double Now() const { return std::chrono::duration<double>(Clock::now() - origin_).count(); }

  bool AnyStarting() const {
    return std::any_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return j->starting(); });
  }

  void Log(const std::string& line) {
    if (o_.log) *o_.log << fmt::format("{:8.1f} s  {}\n", Now(), line) << std::flush;
  }

  void Poll(LiveJob& j) {
    const bool was_running = j.state() == LiveJob::State::kRunning;
    j.Poll();
    if (!was_running) return;
    if (j.state() == LiveJob::State::kDone) Log(fmt::format("{}: done after {} steps", j.name(), j.steps_done()));
    if (j.state() == LiveJob::State::kFailed) Log(j.failure());
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
        Log(fmt::format("{}: done after {} steps (before its resize to {} GPUs)", j->name(), j->steps_done(),
                        want(*j)));
      } else if (j->state() == LiveJob::State::kFailed) {
        Log(j->failure());
      } else {
        Log(fmt::format("{}: {} -> {} GPUs, stopped at step {}", j->name(), from, want(*j), j->steps_done()));
      }
    }
    for (auto& j : jobs_) {
      if (j->state() != LiveJob::State::kWaiting || want(*j) == 0) continue;
      const bool first = j->restarts() < 0;
      j->Start(want(*j));
      const std::string batch = j->adaptive_batch() ? fmt::format(", batch {}", j->batch()) : "";
      Log(first ? fmt::format("{}: starts on {} GPUs{}", j->name(), want(*j), batch)
                : fmt::format("{}: resumes on {} GPUs at step {}{}", j->name(), want(*j), j->steps_done(),
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
    std::vector<double> jcts;
    for (const auto& j : jobs_) {
      LiveJobResult jr{j->name(), j->submit_time(), j->completion_time().value_or(0), std::max(0, j->restarts()),
                       j->restart_seconds(), j->attained_service()};
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
  Clock::time_point origin_;
  std::vector<std::unique_ptr<LiveJob>> jobs_;
  Allocations current_;
};

}  // namespace

LiveResult RunLive(const std::vector<LiveJobSpec>& specs, Policy& policy, const LiveOptions& options) {
  return LiveRun(specs, policy, options).Run();
}

}  // namespace parasol::sched
