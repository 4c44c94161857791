#include "parasol/sched/live_job.h"
#include "parasol/core/plural.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "parasol/core/atomic_file.h"
#include "parasol/core/csv_reader.h"
#include "parasol/core/error.h"
#include "parasol/core/text_fields.h"

namespace parasol::sched {

namespace fs = std::filesystem;

namespace {

// Flags the runner sets itself on every run.
const std::set<std::string>& RunnerFlags() {
  static const std::set<std::string> flags{"--batch",      "--steps",          "--epochs",     "--threads",
                                           "--checkpoint", "--resume",         "--status",     "--stop-file",
                                           "--batch-file", "--adaptive-batch", "--no-progress"};
  return flags;
}

int PositiveInt(const std::string& path, long line, const std::string& what, const std::string& cell) {
  return ParseFieldIn<int>(cell, path, line, what, 1, 1'000'000'000);
}

LiveJobSpec ParseLiveJob(const std::string& path, long line, const std::vector<std::string>& cells) {
  LiveJobSpec j;
  j.name = cells[0];
  if (j.name.empty() || j.name == "." || j.name == ".." ||
      j.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
          std::string::npos) {
    throw ParseError(
        path, line,
        fmt::format("name '{}': use letters, digits, '_', '.' and '-' (it names a folder)", j.name));
  }
  j.submit_time = ParseFieldIn<double>(cells[1], path, line, "time (s)", 0, kMaxSubmitSeconds);
  j.replicas = PositiveInt(path, line, "num_replicas", cells[2]);
  j.batch = PositiveInt(path, line, "batch_size", cells[3]);
  j.steps = PositiveInt(path, line, "steps", cells[4]);
  const std::vector<std::string> args = SplitWords(cells[5]);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string flag = a.substr(0, a.find('='));
    if (RunnerFlags().contains(flag)) {
      throw ParseError(path, line, fmt::format("train_args: {} is set by the cluster, not the job", a));
    }
    if (flag == "--batch-max") {
      const bool joined = flag.size() < a.size();
      if (!joined && i + 1 == args.size())
        throw ParseError(path, line, "train_args: --batch-max needs a number");
      j.max_batch = ParseFieldIn<int>(joined ? a.substr(flag.size() + 1) : args[i + 1], path, line,
                                      "train_args: --batch-max", 1, 1'000'000'000);
    }
    j.train_args.push_back(a);
  }
  if (j.batch % j.replicas != 0) {
    throw ParseError(path, line,
                     fmt::format("batch_size {} does not split over {} replicas", j.batch, j.replicas));
  }
  if (j.max_batch > 0 && j.max_batch < j.batch) {
    throw ParseError(path, line,
                     fmt::format("train_args: --batch-max {} is below batch_size {}", j.max_batch, j.batch));
  }
  return j;
}

}  // namespace

std::vector<LiveJobSpec> ReadLiveJobs(const std::string& path) {
  std::vector<LiveJobSpec> jobs;
  std::set<std::string> names;
  const long last =
      ReadCsvRecords(path, "name,time,num_replicas,batch_size,steps,train_args", 6,
                     [&](long lineno, const std::vector<std::string>& cells) {
                       jobs.push_back(ParseLiveJob(path, lineno, cells));
                       if (!names.insert(jobs.back().name).second)
                         throw ParseError(path, lineno, fmt::format("job '{}' twice", jobs.back().name));
                     });
  if (jobs.empty()) throw ParseError(path, last, "no jobs");
  return jobs;
}

LiveJob::LiveJob(LiveJobSpec spec, const LaunchOptions& launch, bool adaptive, Clock& clock,
                 Clock::TimePoint origin)
    : spec_(std::move(spec)),
      launch_(launch),
      adaptive_(adaptive),
      clock_(clock),
      origin_(origin),
      batch_(spec_.batch) {
  std::error_code ec;
  fs::create_directories(Path(""), ec);
  // A job of the same name from an earlier run must not be resumed.
  for (const char* stale : {"ckpt", "status", "stop", "batch", "train.log"}) {
    if (!ec) fs::remove_all(Path(stale), ec);
  }
  if (ec) throw IoError(fmt::format("{}: cannot prepare the job's folder: {}", Path(""), ec.message()));
}

std::string LiveJob::Path(const std::string& file) const {
  return (fs::path(launch_.work_dir) / spec_.name / file).string();
}

double LiveJob::Now() const { return std::chrono::duration<double>(clock_.Now() - origin_).count(); }

std::optional<GoodputModel> LiveJob::Model() const {
  if (!perf_) return std::nullopt;
  // A fixed batch has efficiency 1; an adaptive one's falls with the batch as its noise says.
  const bool noise = adaptive_batch() && noise_;
  GoodputModel model(*perf_, noise ? noise_->first : 0, noise ? noise_->second / spec_.batch : 0,
                     spec_.batch);
  model.SetCorrections(corrections_);
  return model;
}

int LiveJob::MaxUsefulReplicas() const {
  return std::min(std::max(1, 2 * max_ranks_run_), adaptive_batch() ? spec_.max_batch : spec_.batch);
}

bool LiveJob::AllowsReplicas(int replicas) const {
  if (replicas <= 0) return false;
  return adaptive_batch() ? replicas <= spec_.max_batch : spec_.batch % replicas == 0;
}

BatchLimits LiveJob::batch_limits() const {
  if (!adaptive_batch()) return {spec_.batch, spec_.batch, 1, spec_.batch, false};
  const int64_t trusted = std::max<int64_t>(2 * max_local_run_, spec_.batch);
  // One rank measures its noise from consecutive steps: no accumulation needed or possible.
  return {spec_.batch, spec_.max_batch, 1, static_cast<int>(std::min<int64_t>(trusted, spec_.max_batch)),
          /*accumulate=*/false};
}

int LiveJob::ChooseBatch(int replicas, int nodes) const {
  if (!adaptive_batch()) return spec_.batch;
  // Per rank: at most what keeps the total within --batch-max (the model's per-rank batch is
  // rounded up from a total within it); until the job has measured its noise, the first batch.
  const int most = spec_.max_batch / replicas;
  int local = (spec_.batch + replicas - 1) / replicas;
  const std::optional<GoodputModel> model = noise_ ? Model() : std::nullopt;
  if (model) {
    const BatchLimits b = batch_limits();
    const GoodputModel::Choice c =
        model->Optimize(nodes, replicas, b.max_batch, b.min_local, b.max_local, false);
    if (c.goodput > 0) local = c.atomic_bsz;
  }
  return std::min(local, most) * replicas;
}

std::optional<int> LiveJob::BetterBatch(double min_gain) const {
  if (state_ != State::kRunning || !run_measured_ || !adaptive_batch() || !noise_ || asked_batch_ > 0) {
    return std::nullopt;
  }
  const int want = ChooseBatch(ranks_, nodes_);
  const std::optional<GoodputModel> model = Model();
  if (want == batch_ || !model) return std::nullopt;
  auto goodput = [&](int total) {
    return model->Goodput(nodes_, ranks_, static_cast<double>(total) / ranks_, 0);
  };
  if (goodput(want) < min_gain * goodput(batch_)) return std::nullopt;
  return want;
}

void LiveJob::ChangeBatch(int total) {
  WriteFileAtomically(Path("batch"), [&](std::ostream& out) { out << total / ranks_ << "\n"; });
  asked_batch_ = total;
  std::ofstream(Path("train.log"), std::ios::app)
      << fmt::format("# {:.1f} s: total batch {} asked in place\n", Now(), total);
}

void LiveJob::Start(int replicas, const HostRanks& hosts) {
  hosts_ = hosts;
  nodes_ = std::max<int>(1, static_cast<int>(hosts.size()));
  batch_ = ChooseBatch(replicas, nodes_);
  std::vector<std::string> argv;
  if (!hosts.empty()) {
    std::string list;
    for (const auto& [host, ranks] : hosts)
      list += fmt::format("{}{}:{}", list.empty() ? "" : ",", host, ranks);
    argv = launch_.mpirun;
    argv.insert(argv.end(), {"--host", list});
  } else if (replicas > 1) {
    argv = launch_.mpirun;
  }
  if (!argv.empty()) argv.insert(argv.end(), {"-np", std::to_string(replicas)});
  argv.insert(argv.end(), {launch_.parasol, "train"});
  argv.insert(argv.end(), spec_.train_args.begin(), spec_.train_args.end());
  argv.insert(argv.end(), {"--batch", std::to_string(batch_ / replicas), "--steps",
                           std::to_string(spec_.steps), "--threads", "1", "--checkpoint", Path("ckpt"),
                           "--status", Path("status"), "--stop-file", Path("stop"), "--no-progress"});
  if (adaptive_batch()) argv.insert(argv.end(), {"--adaptive-batch", "--batch-file", Path("batch")});
  // train.ckpt: the image models'; checkpoint.txt: the rank checkpoints of the language model and
  // the dynamic networks (dl/rank_checkpoint.h), committed once every rank's file is whole.
  const fs::path ckpt(Path("ckpt"));
  if (fs::exists(ckpt / "train.ckpt") || fs::exists(ckpt / "checkpoint.txt"))
    argv.insert(argv.end(), {"--resume", Path("ckpt")});
  fs::remove(Path("stop"));
  fs::remove(Path("status"));
  fs::remove(Path("batch"));
  asked_batch_ = 0;
  std::string where;
  for (const auto& [host, ranks] : hosts) where += fmt::format(" {}:{}", host, ranks);
  std::ofstream(Path("train.log"), std::ios::app)
      << fmt::format("# {:.1f} s: {}{}, total batch {}\n", Now(), Count(replicas, "rank"),
                     where.empty() ? "" : " on" + where, batch_);
  process_ = std::make_unique<Subprocess>(argv, Path("train.log"), launch_.env);
  state_ = State::kRunning;
  ranks_ = replicas;
  ++restarts_;
  run_first_step_ = steps_done_;
  run_measured_ = false;
  run_started_ = accounted_until_ = last_step_at_ = Now();
}

double LiveJob::stalled_s() const {
  return state_ == State::kRunning && run_measured_ ? Now() - last_step_at_ : 0;
}

void LiveJob::Requeue() {
  KillRun();
  failure_.clear();
}

void LiveJob::KillRun() {
  if (process_) {
    process_->Signal(SIGKILL);
    process_->Wait(Deadline::After(std::chrono::seconds(10)));
    ChargeService();
    process_.reset();
  }
  ranks_ = 0;
  state_ = State::kWaiting;
  steps_known_ = false;
}

void LiveJob::Abandon(std::string why) {
  if (process_) Requeue();
  state_ = State::kFailed;
  failure_ = std::move(why);
}

void LiveJob::Poll() {
  if (state_ != State::kRunning && state_ != State::kStopping) return;
  ChargeService();
  const std::optional<int> exit_status = process_->Poll();
  ReadStatus();
  if (exit_status) Ended(*exit_status);
}

void LiveJob::ChargeService() {
  const double now = Now();
  attained_service_ += (now - accounted_until_) * ranks_;
  accounted_until_ = now;
}

void LiveJob::ReadStatus() {
  if (!fs::exists(Path("status"))) return;
  JobStatus s;
  try {
    s = ReadJobStatus(Path("status"));
  } catch (const ParseError& e) {
    // One job's odd file must not end the cluster: the job keeps its last known progress, and
    // its log says why (once per distinct error).
    if (status_error_ != e.what()) {
      status_error_ = e.what();
      std::ofstream(Path("train.log"), std::ios::app)
          << fmt::format("# {:.1f} s: status ignored: {}\n", Now(), e.what());
    }
    return;
  }
  if (s.step > run_first_step_ && !run_measured_) {
    restart_seconds_ += Now() - run_started_;  // start-up: launch, data, model, first step
    run_measured_ = true;
  }
  if (s.step != steps_done_) last_step_at_ = Now();
  steps_done_ = s.step;
  steps_known_ = true;
  progress_ = s.progress;
  if (s.grad_measured && s.grad_sqr > 0) noise_ = {s.grad_sqr, s.grad_var};
  if (s.ranks == ranks_ && s.batch_per_rank > 0) {
    batch_ = static_cast<int>(s.batch_per_rank) * ranks_;  // in place: the run has taken it
    if (batch_ == asked_batch_) asked_batch_ = 0;
  }
  // A status without a batch per rank (hand-written, or from another program) gives no shape.
  if (s.step_seconds > 0 && s.ranks == ranks_ && s.batch_per_rank > 0) Observe(s);
}

// A new shape (ranks, batch per rank), or a median that moved more than 3%, refits the throughput
// model.
void LiveJob::Observe(const JobStatus& s) {
  max_ranks_run_ = std::max(max_ranks_run_, ranks_);
  max_local_run_ = std::max(max_local_run_, s.batch_per_rank);
  const PerfObservation seen{nodes_, ranks_, static_cast<double>(s.batch_per_rank),
                             std::max(s.step_seconds - s.sync_seconds, 1e-6), s.step_seconds};
  const std::tuple<int, int, int64_t> shape{nodes_, ranks_, s.batch_per_rank};
  auto it = observed_.find(shape);
  if (it != observed_.end() && std::abs(it->second.step_time / seen.step_time - 1) < 0.03) return;
  observed_[shape] = seen;
  std::vector<PerfObservation> obs;
  for (const auto& [k, o] : observed_) obs.push_back(o);
  perf_ = FitPerfParams(obs);
  corrections_ = GoodputModel::MeasuredCorrections(*perf_, obs);
}

void LiveJob::Ended(int exit_status) {
  process_.reset();
  ranks_ = 0;
  if (exit_status == 0 && progress_ >= static_cast<double>(spec_.steps) - 1e-6) {
    state_ = State::kDone;
    completion_ = Now();
  } else if (exit_status == 0 && state_ == State::kStopping) {
    state_ = State::kWaiting;
  } else {
    state_ = State::kFailed;
    failure_ = fmt::format("job {}: train exited with status {} at step {} of {} (see {})", spec_.name,
                           exit_status, steps_done_, spec_.steps, Path("train.log"));
  }
}

void LiveJob::Stop(Deadline deadline) {
  const double asked = Now();
  state_ = State::kStopping;
  std::ofstream(Path("stop")) << "";
  if (process_->Wait(deadline)) {
    Poll();
  } else {
    // Stuck, or still starting up at the deadline: killed, it resumes from its last checkpoint
    // (the next run's first status corrects the steps done).
    KillRun();
  }
  restart_seconds_ += Now() - asked;
}

}  // namespace parasol::sched
