// The live cluster's pieces that need no real training: its job file, a job's batch choice (with a
// stand-in trainer), and the goodput policy over jobs whose batch must split evenly (the live
// jobs' rule) measured at one shape.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"
#include "parasol/sched/goodput_policy.h"
#include "parasol/sched/host_file.h"
#include "parasol/sched/live_cluster.h"
#include "parasol/sched/live_job.h"
#include "parasol/sched/tiresias.h"

namespace parasol::sched {
namespace {

// Stateless: the jobs below keep a reference to it past the functions that make them.
SystemClock machine_clock;

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string WriteJobs(const std::string& body) {
  const fs::path p = TestPath("live_jobs.csv");
  std::ofstream(p) << "name,time,num_replicas,batch_size,steps,train_args\n" << body;
  return p.string();
}

std::string ErrorOf(const std::string& body) {
  const std::string path = WriteJobs(body);
  try {
    ReadLiveJobs(path);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LiveJobs, ReadsTheJobFile) {
  auto jobs = ReadLiveJobs(WriteJobs("a,0,1,256,600,--model mlp --dataset synthetic\nb-2,12.5,2,64,40,\n"));
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].name, "a");
  EXPECT_EQ(jobs[0].batch, 256);
  EXPECT_EQ(jobs[0].steps, 600);
  EXPECT_THAT(jobs[0].train_args, ::testing::ElementsAre("--model", "mlp", "--dataset", "synthetic"));
  EXPECT_DOUBLE_EQ(jobs[1].submit_time, 12.5);
  EXPECT_EQ(jobs[1].replicas, 2);
  EXPECT_TRUE(jobs[1].train_args.empty());
  EXPECT_EQ(jobs[0].max_batch, 0);
  auto bounded =
      ReadLiveJobs(WriteJobs("a,0,1,64,10,--batch-max 512 --model mlp\nb,0,1,64,10,--batch-max=128\n"));
  EXPECT_EQ(bounded[0].max_batch, 512);
  EXPECT_EQ(bounded[1].max_batch, 128);
}

TEST(LiveJobs, BadLinesNameFileAndLine) {
  EXPECT_THAT(ErrorOf("a,0,1,64,10,--model mlp\na,1,1,64,10,\n"), HasSubstr(":3: job 'a' twice"));
  EXPECT_THAT(ErrorOf("a/b,0,1,64,10,\n"), HasSubstr(":2: name 'a/b'"));
  EXPECT_THAT(ErrorOf("..,0,1,64,10,\n"), HasSubstr(":2: name '..'"));
  EXPECT_THAT(ErrorOf("a,soon,1,64,10,\n"), HasSubstr(":2: time (s) 'soon' is not a finite number"));
  EXPECT_THAT(ErrorOf("a,inf,1,64,10,\n"), HasSubstr(":2: time (s) 'inf' is not a finite number"));
  EXPECT_THAT(ErrorOf("a,1e300,1,64,10,\n"), HasSubstr(":2: time (s) 1e300 is not in [0, 10000000]"));
  EXPECT_THAT(ErrorOf("a,0,64x,64,10,\n"), HasSubstr(":2: num_replicas '64x' is not a whole number"));
  EXPECT_THAT(ErrorOf("a,0,0,64,10,\n"), HasSubstr(":2: num_replicas 0 is not in [1, 1000000000]"));
  EXPECT_THAT(ErrorOf("a,0,1,64,-3,\n"), HasSubstr(":2: steps -3 is not in [1, 1000000000]"));
  EXPECT_THAT(ErrorOf("a,0,1,64,10,--resume=x\n"),
              HasSubstr(":2: train_args: --resume=x is set by the cluster"));
  EXPECT_THAT(ErrorOf("a,0,1,64,10\n"), HasSubstr(":2: 5 fields, expected 6"));
  EXPECT_THAT(ErrorOf("a,0,1,64,10,--adaptive-batch\n"),
              HasSubstr(":2: train_args: --adaptive-batch is set by"));
  EXPECT_THAT(ErrorOf("a,0,1,64,10,--batch-max 32\n"),
              HasSubstr(":2: train_args: --batch-max 32 is below batch_size 64"));
  EXPECT_THAT(ErrorOf("a,0,1,64,10,--batch-max\n"), HasSubstr(":2: train_args: --batch-max needs a number"));
  EXPECT_THAT(ErrorOf("a,0,1,64,10,--batch-max=lots\n"),
              HasSubstr(":2: train_args: --batch-max 'lots' is not"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("no jobs"));
}

// A job as the live runner presents it: batch fixed, measured on some counts (1 ms + 2 ms per
// sample on a rank, plus `sync_s` of synchronisation with more than one), counts that split its
// batch only.
class MeasuredJob : public Job {
 public:
  MeasuredJob(std::string name, int batch, std::vector<int> measured, double remaining = 100,
              double sync_s = 0.002)
      : name_(std::move(name)), batch_(batch), remaining_(remaining) {
    std::vector<PerfObservation> obs;
    for (int k : measured) {
      const double compute = 0.001 + 0.002 * batch / k, sync = k > 1 ? sync_s : 0.0;
      obs.push_back({1, k, static_cast<double>(batch / k), compute, compute + sync});
      max_ = std::max(max_, k);
    }
    perf_ = FitPerfParams(obs);
    corrections_ = GoodputModel::MeasuredCorrections(perf_, obs);
  }
  const std::string& name() const override { return name_; }
  double submit_time() const override { return 0; }
  int requested_replicas() const override { return 1; }
  double attained_service() const override { return 0; }
  bool adaptive() const override { return true; }
  std::optional<GoodputModel> Model() const override {
    GoodputModel m(perf_, 0, 0, batch_);
    m.SetCorrections(corrections_);
    return m;
  }
  int MaxUsefulReplicas() const override { return std::min(2 * max_, batch_); }
  bool AllowsReplicas(int k) const override { return batch_ % k == 0; }
  BatchLimits batch_limits() const override { return {batch_, batch_, 1, batch_}; }
  double remaining_iterations() const override { return remaining_; }
  double measured_restart_s() const override { return restart_s_; }
  void set_measured_restart_s(double s) { restart_s_ = s; }

 private:
  std::string name_;
  int batch_;
  double remaining_;
  double restart_s_ = 0;
  int max_ = 0;
  PerfParams perf_;
  GoodputModel::Corrections corrections_;
};

// Writes an executable shell script (the tests' stand-ins for `parasol train` and mpirun).
void WriteScript(const fs::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  fs::permissions(path, fs::perms::owner_all);
}

// A job's status file that cannot be read (here: not a status file at all) leaves that job at its
// last known progress and says so in its log; the cluster goes on (it used to end).
TEST(LiveJobs, AnUnreadableStatusFileIsLoggedNotFatal) {
  const TestDir dir("live_status");
  const fs::path fake = dir / "fake-parasol";
  WriteScript(fake, "sleep 30\n");
  LiveJob job({.name = "odd", .batch = 8, .steps = 10}, {.parasol = fake.string(), .work_dir = dir.string()},
              false, machine_clock, machine_clock.Now());
  job.Start(1);
  std::ofstream(dir / "odd" / "status") << "step three\n";
  EXPECT_NO_THROW(job.Poll());
  EXPECT_NO_THROW(job.Poll());
  EXPECT_EQ(job.steps_done(), 0);
  std::ifstream log(dir / "odd" / "train.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("status ignored: " + (dir / "odd" / "status").string() + ":1:"));
  EXPECT_EQ(text.find("status ignored"), text.rfind("status ignored")) << "logged more than once:\n" << text;
}

// A stand-in for `parasol train` (and for mpirun, which drops "-np N"): it appends its arguments to
// args.txt, reports 5 steps on one rank at batch 64 with the given gradient noise (|G|^2 = 1,
// per-sample variance `var`), and waits for its stop file; a batch file meanwhile is taken as the
// real one is (removed, and reported as the batch per rank from step 6).
fs::path FakeTrainer(const fs::path& dir, double var) {
  fs::create_directories(dir);
  WriteScript(dir / "mpirun", "shift 2\nexec \"$@\"\n");
  WriteScript(dir / "parasol",
              fmt::format("echo \"$@\" >> {}\n"
                          "while [ $# -gt 0 ]; do\n"
                          "  case \"$1\" in\n"
                          "    --status) st=$2;; --stop-file) stop=$2;; --batch-file) bf=$2;;\n"
                          "  esac\n"
                          "  shift\n"
                          "done\n"
                          "report() {{\n"
                          "  printf 'step %s\\ntotal_steps 100\\nprogress %s\\nranks 1\\nbatch_per_rank %s\\n"
                          "step_seconds 0.1\\nsync_seconds 0\\ngrad_sqr 1\\ngrad_var {}\\nstate running\\n' "
                          "$1 $1 $2 > \"$st.tmp\" && mv \"$st.tmp\" \"$st\"\n"
                          "}}\n"
                          "report 5 64\n"
                          "while [ ! -e \"$stop\" ]; do\n"
                          "  if [ -n \"$bf\" ] && [ -e \"$bf\" ]; then\n"
                          "    b=$(cat \"$bf\"); rm \"$bf\"; report 6 $b\n"
                          "  fi\n"
                          "  sleep 0.02\n"
                          "done\n",
                          (dir / "args.txt").string(), var));
  return dir;
}

std::vector<std::string> Lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A job with `train_args` running on one rank (the fake trainer's), once it has reported.
std::unique_ptr<LiveJob> RunningOnOneRank(const fs::path& dir, const std::vector<std::string>& train_args,
                                          double var) {
  FakeTrainer(dir, var);
  // Through the job file's reader, which finds --batch-max in the arguments.
  std::string args;
  for (const std::string& a : train_args) args += a + " ";
  const LiveJobSpec spec = ReadLiveJobs(WriteJobs("job,0,1,64,100," + args + "\n")).at(0);
  auto job = std::make_unique<LiveJob>(spec,
                                       LaunchOptions{.parasol = (dir / "parasol").string(),
                                                     .mpirun = {(dir / "mpirun").string()},
                                                     .work_dir = dir.string()},
                                       true, machine_clock, machine_clock.Now());
  job->Start(1);
  for (int i = 0; i < 500 && job->steps_done() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    job->Poll();
  }
  EXPECT_EQ(job->steps_done(), 5);
  return job;
}

// The same, stopped: ready to resume.
std::unique_ptr<LiveJob> RunOnceOnOneRank(const fs::path& dir, const std::vector<std::string>& train_args,
                                          double var) {
  auto job = RunningOnOneRank(dir, train_args, var);
  job->Stop(Deadline::After(std::chrono::seconds(20)));
  EXPECT_EQ(job->state(), LiveJob::State::kWaiting);
  EXPECT_DOUBLE_EQ(job->remaining_iterations(), 95);
  return job;
}

// Pollux's co-adaptation on a live job: with gradient noise far above its signal (noise scale
// 6400 samples, 100x the batch) a larger batch loses no statistical efficiency, so the job resumes
// on two ranks at the largest batch it trusts (twice the 64 per rank it has measured; --batch-max
// allows 512), with AdaScale on; with a quiet gradient (noise
// scale 0.1 samples) a larger batch only wastes samples and the batch stays 64. A job without
// --batch-max keeps its batch and only counts that split it.
TEST(LiveJobs, AnAdaptiveBatchGrowsWithTheMeasuredNoise) {
  const TestDir base("live_batch");
  fs::remove_all(base);
  auto noisy = RunOnceOnOneRank(base / "noisy", {"--model", "mlp", "--batch-max", "512"}, 6400);
  EXPECT_TRUE(noisy->adaptive_batch());
  EXPECT_TRUE(noisy->AllowsReplicas(3));
  noisy->Start(2);
  EXPECT_EQ(noisy->batch(), 256);
  noisy->Stop(Deadline::After(std::chrono::seconds(20)));
  const auto args = Lines(base / "noisy" / "args.txt");
  ASSERT_EQ(args.size(), 2u);
  EXPECT_THAT(args[0], HasSubstr("--batch 64 "));
  EXPECT_THAT(args[1], HasSubstr("--batch 128 "));
  EXPECT_THAT(args[1], HasSubstr("--adaptive-batch"));

  auto quiet = RunOnceOnOneRank(base / "quiet", {"--batch-max", "512"}, 0.1);
  EXPECT_EQ(quiet->ChooseBatch(2), 64);

  auto fixed = RunOnceOnOneRank(base / "fixed", {"--model", "mlp"}, 6400);
  EXPECT_FALSE(fixed->adaptive_batch());
  EXPECT_EQ(fixed->ChooseBatch(2), 64);
  EXPECT_FALSE(fixed->AllowsReplicas(3));
  EXPECT_EQ(Lines(base / "fixed" / "args.txt")[0].find("--adaptive-batch"), std::string::npos);
}

// A resized job resumes from its last checkpoint whichever trainer wrote it: the image models'
// train.ckpt, or the checkpoint.txt that commits the language model's and the dynamic networks'
// rank files; before any checkpoint it starts afresh.
TEST(LiveJobs, AResizedJobResumesFromEitherKindOfCheckpoint) {
  for (const std::string marker : {"train.ckpt", "checkpoint.txt"}) {
    const TestDir base("live_resume");
    fs::remove_all(base);
    auto job = RunOnceOnOneRank(base, {"--model", "mlp"}, 1);
    fs::create_directories(base / "job" / "ckpt");
    std::ofstream(base / "job" / "ckpt" / marker) << "";
    job->Start(2);
    job->Stop(Deadline::After(std::chrono::seconds(20)));
    const auto args = Lines(base / "args.txt");
    ASSERT_EQ(args.size(), 2u) << marker;
    EXPECT_EQ(args[0].find("--resume"), std::string::npos) << marker;
    EXPECT_THAT(args[1], HasSubstr("--resume " + (base / "job" / "ckpt").string())) << marker;
    fs::remove_all(base);
  }
}

// Between resizes an adaptive batch changes in place, as Pollux's agent changes it: a running
// job whose noise makes a larger batch worth more goodput is asked for it through its batch file
// (twice its measured batch, the most it trusts; one change at a time) and takes it without a
// restart; with a quiet gradient the batch stays.
TEST(LiveJobs, AnAdaptiveBatchChangesInPlaceWhileItRuns) {
  const TestDir base("live_in_place");
  fs::remove_all(base);
  auto noisy = RunningOnOneRank(base / "noisy", {"--batch-max", "512"}, 6400);
  EXPECT_THAT(Lines(base / "noisy" / "args.txt").at(0),
              HasSubstr("--batch-file " + (base / "noisy" / "job" / "batch").string()));
  const std::optional<int> better = noisy->BetterBatch(1.05);
  ASSERT_TRUE(better.has_value());
  EXPECT_EQ(*better, 128);
  noisy->ChangeBatch(*better);
  EXPECT_FALSE(noisy->BetterBatch(1.05).has_value());
  for (int i = 0; i < 500 && noisy->steps_done() < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    noisy->Poll();
  }
  EXPECT_EQ(noisy->steps_done(), 6);
  EXPECT_EQ(noisy->batch(), 128);
  EXPECT_EQ(noisy->restarts(), 0);
  EXPECT_EQ(Lines(base / "noisy" / "args.txt").size(), 1u);
  noisy->Stop(Deadline::After(std::chrono::seconds(20)));

  auto quiet = RunningOnOneRank(base / "quiet", {"--batch-max", "512"}, 0.1);
  EXPECT_FALSE(quiet->BetterBatch(1.05).has_value());
  EXPECT_EQ(quiet->batch(), 64);
  quiet->Stop(Deadline::After(std::chrono::seconds(20)));
}

// A run on named hosts goes through the launcher with their ranks (as mpirun's --host takes
// them), even with one rank; a run lost with its host is killed and the job queued again.
TEST(LiveJobs, AJobOnHostsIsLaunchedThereAndRequeuedWhenLost) {
  const TestDir dir("live_hosts");
  fs::remove_all(dir);
  FakeTrainer(dir, 1);
  WriteScript(dir / "mpirun",
              fmt::format("echo \"$@\" >> {}\nshift 4\nexec \"$@\"\n", (dir / "launcher.txt").string()));
  LiveJob job({.name = "j", .batch = 64, .steps = 100},
              {.parasol = (dir / "parasol").string(),
               .mpirun = {(dir / "mpirun").string()},
               .work_dir = dir.string()},
              true, machine_clock, machine_clock.Now());
  job.Start(3, {{"node-a", 1}, {"node-b", 2}});
  for (int i = 0; i < 500 && job.steps_done() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    job.Poll();
  }
  ASSERT_EQ(job.steps_done(), 5);
  EXPECT_EQ(job.hosts(), (HostRanks{{"node-a", 1}, {"node-b", 2}}));
  EXPECT_THAT(Lines(dir / "launcher.txt").at(0), ::testing::StartsWith("--host node-a:1,node-b:2 -np 3 "));
  job.Requeue();
  EXPECT_EQ(job.state(), LiveJob::State::kWaiting);
  EXPECT_FALSE(job.steps_known());
  job.Start(1, {{"node-a", 1}});
  for (int i = 0; i < 500 && Lines(dir / "launcher.txt").size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(Lines(dir / "launcher.txt").at(1), ::testing::StartsWith("--host node-a:1 -np 1 "));
  job.Abandon("job j: gone");
  EXPECT_EQ(job.state(), LiveJob::State::kFailed);
  EXPECT_EQ(job.failure(), "job j: gone");
}

// Waits (at most 20 s) until `path` has a line containing `text`.
bool WaitForLine(const fs::path& path, const std::string& text) {
  for (int i = 0; i < 2000; ++i) {
    for (const std::string& line : Lines(path)) {
      if (line.find(text) != std::string::npos) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A host that fails is lost, probed again in the background and, once it answers, rejoins: the
// job it lost resumes there. Stand-ins: the launcher fails everything on node-b while the file
// `down` exists (a run there ends with status 1, a probe there fails), and the trainer reports
// step 5, then finishes when the file `finish` appears.
TEST(LiveCluster, ALostHostThatAnswersAgainRejoins) {
  const TestDir dir("live_back");
  const std::string down = (dir / "down").string(), finish = (dir / "finish").string();
  WriteScript(dir / "mpirun",
              fmt::format("echo \"$@\" >> {0}\nhost=$2\nshift 4\n"
                          "case $host in node-b*) on_b=1;; *) on_b=0;; esac\n"
                          "if [ \"$1\" = true ]; then [ $on_b = 1 ] && [ -e {1} ] && exit 1; exit 0; fi\n"
                          "\"$@\" & pid=$!\n"
                          "while kill -0 $pid 2>/dev/null; do\n"
                          "  if [ $on_b = 1 ] && [ -e {1} ]; then kill $pid; exit 1; fi\n"
                          "  sleep 0.02\n"
                          "done\n"
                          "wait $pid\n",
                          (dir / "launcher.txt").string(), down));
  WriteScript(dir / "parasol",
              fmt::format("while [ $# -gt 0 ]; do case \"$1\" in --status) st=$2;; esac; shift; done\n"
                          "report() {{ printf 'step %s\\ntotal_steps 100\\nprogress %s\\nranks 1\\n"
                          "batch_per_rank 64\\nstep_seconds 0.1\\nsync_seconds 0\\nstate %s\\n' $1 $1 $2 "
                          "> \"$st.tmp\" && mv \"$st.tmp\" \"$st\"; }}\n"
                          "report 5 running\n"
                          "while [ ! -e {} ]; do sleep 0.02; done\n"
                          "report 100 done\n",
                          finish));
  const auto specs = ReadLiveJobs(WriteJobs("a,0,1,64,100,\nb,0,1,64,100,\n"));
  LiveOptions o;
  o.hosts = {{"node-a", 1}, {"node-b", 1}};
  o.adaptive = false;
  o.interval_s = 0.2;
  o.poll_s = 0.02;
  o.host_probe_timeout_s = 5;
  o.host_retry_s = 0.2;
  o.timeout_s = 60;
  o.launch = {
      .parasol = (dir / "parasol").string(), .mpirun = {(dir / "mpirun").string()}, .work_dir = dir.string()};
  std::ofstream log(dir / "cluster.log");
  o.log = &log;
  TiresiasPolicy policy;
  auto run = std::async(std::launch::async, [&] { return RunLive(specs, policy, o); });
  const fs::path launches = dir / "launcher.txt";
  EXPECT_TRUE(WaitForLine(launches, "--host node-a:1 -np 1 "));
  EXPECT_TRUE(WaitForLine(launches, "--host node-b:1 -np 1 "));
  std::ofstream(down) << "";
  EXPECT_TRUE(
      WaitForLine(dir / "cluster.log", "host node-b lost: starting a process there failed with status 1"));
  fs::remove(down);
  EXPECT_TRUE(WaitForLine(dir / "cluster.log", "host node-b is back: it takes jobs again"));
  EXPECT_TRUE(WaitForLine(dir / "cluster.log", "resumes on 1 GPU from its last checkpoint (node-b:1)"));
  std::ofstream(finish) << "";
  const LiveResult r = run.get();
  EXPECT_EQ(r.lost_hosts, std::vector<std::string>{"node-b"});
  EXPECT_EQ(r.returned_hosts, std::vector<std::string>{"node-b"});
  EXPECT_TRUE(r.failures.empty()) << r.failures.at(0);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_GT(r.jobs[0].completion_time, 0);
  EXPECT_GT(r.jobs[1].completion_time, 0);
}

// A new job runs on one GPU until it has measured itself; a round follows that measurement (not
// the next interval, 1000 s away), and with the allocation assumed to hold an interval the policy
// gives it the second GPU: its relaunch on two ranks (which the stand-in finishes at once) ends
// the run.
TEST(LiveCluster, AJobThatHasMeasuredItselfIsResizedBeforeTheInterval) {
  const TestDir dir("live_measured");
  WriteScript(dir / "mpirun", "shift 2\nexec \"$@\"\n");
  WriteScript(dir / "parasol",
              fmt::format("echo \"$@\" >> {0}\n"
                          "while [ $# -gt 0 ]; do\n"
                          "  case \"$1\" in --status) st=$2;; --stop-file) stop=$2;; esac; shift\n"
                          "done\n"
                          "if [ $(wc -l < {0}) -gt 1 ]; then\n"
                          "  printf 'step 100\\ntotal_steps 10000\\nprogress 10000\\nranks 2\\n"
                          "batch_per_rank 32\\nstep_seconds 0.05\\nsync_seconds 0\\nstate done\\n' "
                          "> \"$st.tmp\"\n"
                          "  mv \"$st.tmp\" \"$st\"\n"
                          "  exit 0\n"
                          "fi\n"
                          "printf 'step 5\\ntotal_steps 10000\\nprogress 5\\nranks 1\\nbatch_per_rank 64\\n"
                          "step_seconds 0.1\\nsync_seconds 0\\nstate running\\n' > \"$st.tmp\"\n"
                          "mv \"$st.tmp\" \"$st\"\n"
                          "while [ ! -e \"$stop\" ]; do sleep 0.02; done\n",
                          (dir / "args.txt").string()));
  LiveOptions o;
  o.gpus = 2;
  o.interval_s = 1000;
  o.poll_s = 0.02;
  o.timeout_s = 30;
  o.launch = {
      .parasol = (dir / "parasol").string(), .mpirun = {(dir / "mpirun").string()}, .work_dir = dir.string()};
  GoodputPolicy policy(
      {.restart_penalty_s = 5, .horizon_s = 60, .min_hold_s = 1000, .remaining_scale_s = 600});
  // 10,000 steps of 0.1 s: long enough that a second GPU (1.33x by the model) repays a restart.
  const LiveResult r = RunLive({{.name = "j", .batch = 64, .steps = 10000}}, policy, o);
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].restarts, 1);
  EXPECT_GT(r.jobs[0].completion_time, 0);
  const auto args = Lines(dir / "args.txt");
  ASSERT_EQ(args.size(), 2u);
  EXPECT_THAT(args[1], HasSubstr("--batch 32 "));
}

// The schedule runs on the clock it is given: on a driven clock a job submitted at 30 s starts at
// 30.0 s of that clock, not earlier and not when the machine happens to get there. The test moves
// time one poll at a time, each once the run's loop sleeps on the clock again.
TEST(LiveCluster, AJobStartsAtItsSubmitTimeOnTheSchedulesClock) {
  const TestDir dir("live_clock");
  WriteScript(dir / "mpirun", "shift 2\nexec \"$@\"\n");
  WriteScript(dir / "parasol",
              "while [ $# -gt 0 ]; do case \"$1\" in --status) st=$2;; esac; shift; done\n"
              "printf 'step 10\\ntotal_steps 10\\nprogress 10\\nranks 1\\nbatch_per_rank 64\\n"
              "step_seconds 0.1\\nsync_seconds 0\\nstate done\\n' > \"$st.tmp\" && mv \"$st.tmp\" \"$st\"\n");
  ManualClock clock;
  LiveOptions o;
  o.gpus = 2;
  o.adaptive = false;
  o.poll_s = 1;
  o.timeout_s = 0;  // the stand-in takes real time to finish, however fast the test moves the clock
  o.env = Env(nullptr, &clock);
  o.launch = {
      .parasol = (dir / "parasol").string(), .mpirun = {(dir / "mpirun").string()}, .work_dir = dir.string()};
  std::ostringstream log;
  o.log = &log;
  TiresiasPolicy policy;
  auto run = std::async(std::launch::async, [&] {
    return RunLive({{.name = "late", .submit_time = 30, .batch = 64, .steps = 10}}, policy, o);
  });
  for (int second = 0; second < 30; ++second) {
    ASSERT_TRUE(clock.WaitForSleepers(1, Deadline::After(std::chrono::seconds(20))));
    EXPECT_EQ(log.str(), "") << "at " << second << " s";  // nothing has started
    clock.Advance(std::chrono::seconds(1));
  }
  const Deadline give_up = Deadline::After(std::chrono::seconds(60));
  while (run.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
    ASSERT_FALSE(give_up.Expired()) << "the job did not finish";
    if (clock.WaitForSleepers(1, Deadline::After(std::chrono::milliseconds(50))))
      clock.Advance(std::chrono::seconds(1));
  }
  const LiveResult r = run.get();
  EXPECT_THAT(log.str(), ::testing::StartsWith("    30.0 s  late: starts on 1 GPU\n"));
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_TRUE(r.failures.empty());
}

// Past the run's timeout on its clock, the run ends with an error naming the jobs left: here a
// trainer that never reports, and 100 s of the driven clock that pass in a blink.
TEST(LiveCluster, TheRunsTimeoutIsCountedOnItsClock) {
  const TestDir dir("live_timeout");
  WriteScript(dir / "mpirun", "shift 2\nexec \"$@\"\n");
  WriteScript(dir / "parasol",
              "while [ $# -gt 0 ]; do case \"$1\" in --stop-file) stop=$2;; esac; shift; done\n"
              "while [ ! -e \"$stop\" ]; do sleep 0.02; done\n");
  ManualClock clock;
  LiveOptions o;
  o.gpus = 1;
  o.poll_s = 1;
  o.timeout_s = 100;
  o.stop_timeout_s = 5;
  o.env = Env(nullptr, &clock);
  o.launch = {
      .parasol = (dir / "parasol").string(), .mpirun = {(dir / "mpirun").string()}, .work_dir = dir.string()};
  TiresiasPolicy policy;
  const Clock::TimePoint start = clock.Now();
  auto run = std::async(std::launch::async,
                        [&] { return RunLive({{.name = "stuck", .batch = 64, .steps = 10}}, policy, o); });
  while (run.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (clock.WaitForSleepers(1, Deadline::After(std::chrono::milliseconds(50))))
      clock.Advance(std::chrono::seconds(1));
  }
  EXPECT_THAT([&] { run.get(); }, ::testing::ThrowsMessage<TimeoutError>(
                                      HasSubstr("not finished after 100 s: stuck (at step 0")));
  EXPECT_EQ(clock.Now() - start, std::chrono::seconds(101));
}

TEST(LiveJobs, GoodputPolicyGivesOnlyCountsThatSplitTheBatch) {
  const ClusterSpec one_node{1, 8};
  // Batch 30 measured on 1, 2 and 3 ranks (so worth up to 6): 1, 2, 3, 5 and 6 split it, 4 not.
  MeasuredJob job("job", 30, {1, 2, 3});
  GoodputPolicy::Curve c = GoodputPolicy::SpeedupCurve(job, one_node);
  EXPECT_THAT(c.counts, ::testing::ElementsAre(0, 1, 2, 3, 5, 6));
  // Efficiency stays 1 at the fixed batch, so speedups are throughput ratios: more ranks, faster.
  EXPECT_GT(c.speedup[2], 1.0);
  GoodputPolicy policy({.restart_penalty_s = 0});
  std::vector<const Job*> active{&job};
  Allocations alloc = policy.Optimize(100, active, {}, one_node);
  const int got = static_cast<int>(alloc["job"].size());
  EXPECT_TRUE(got == 1 || got == 2 || got == 3 || got == 5 || got == 6) << got;
  // Alone on a machine, a job that scales gets more than one core.
  EXPECT_GT(got, 1);
}

// A running job that scales gets a second core when it has work left, but not when it would finish
// at its current count before the restart paid off (it used to be stopped for a resize it never saw),
// nor when its measured restarts cost more than the second core would gain in the horizon.
TEST(LiveJobs, GoodputPolicyDoesNotResizeAJobAboutToFinish) {
  const ClusterSpec one_node{1, 2};
  GoodputPolicy policy({.restart_penalty_s = 5, .horizon_s = 60});
  const Allocations on_one{{"job", {0}}};
  // About 65 ms a step on one rank at batch 64: 2 steps are 0.13 s, far less than the restart.
  MeasuredJob ending("job", 64, {1, 2}, 2);
  MeasuredJob long_one("job", 64, {1, 2}, 100000);
  EXPECT_EQ(policy.Optimize(100, {&long_one}, on_one, one_node)["job"].size(), 2u);
  EXPECT_EQ(policy.Optimize(100, {&ending}, on_one, one_node)["job"].size(), 1u);
  // Nor when its restarts have cost far more than the policy's penalty assumes.
  long_one.set_measured_restart_s(600);
  EXPECT_EQ(policy.Optimize(100, {&long_one}, on_one, one_node)["job"].size(), 1u);
}

// A job on both GPUs that a second GPU speeds up only 1.2x (40 ms of synchronisation against 129
// ms a step), when another job arrives: with much work left it gives the newcomer a GPU; with two
// steps left it keeps both (a restart to one GPU would end it later, and both are free soon).
TEST(LiveJobs, GoodputPolicyLetsAJobAboutToFinishKeepItsGpus) {
  const ClusterSpec one_node{1, 2};
  GoodputPolicy policy({.restart_penalty_s = 5, .horizon_s = 60, .remaining_scale_s = 0});
  const Allocations on_both{{"old", {0, 0}}};
  MeasuredJob newcomer("new", 64, {1}, 100000);
  MeasuredJob long_one("old", 64, {1, 2}, 100000, 0.04);
  MeasuredJob ending("old", 64, {1, 2}, 2, 0.04);
  Allocations a = policy.Optimize(100, {&long_one, &newcomer}, on_both, one_node);
  EXPECT_EQ(a["old"].size(), 1u);
  EXPECT_EQ(a["new"].size(), 1u);
  a = policy.Optimize(100, {&ending, &newcomer}, on_both, one_node);
  EXPECT_EQ(a["old"].size(), 2u);
  EXPECT_FALSE(a.contains("new"));
}

}  // namespace
}  // namespace parasol::sched
