#include "parasol/dl/job_control.h"

#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <utility>

#include <fmt/format.h>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/core/job_status.h"
#include "parasol/core/stats.h"
#include "parasol/core/text_fields.h"

namespace parasol::dl {
namespace {

constexpr size_t kWarmupSteps = 2;
constexpr size_t kWindowSteps = 50;
constexpr double kWriteEverySeconds = 0.25;

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median of the last kWindowSteps entries after the warm-up; 0 (none yet) while every step is a
// warm-up step: a scheduler would otherwise fit a run's start-up into its step time and resize
// the job for it.
double RecentMedian(const std::vector<double>& v) {
  if (v.size() <= kWarmupSteps) return 0;
  size_t begin = kWarmupSteps;
  if (v.size() > begin + kWindowSteps) begin = v.size() - kWindowSteps;
  return Median(std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(begin), v.end()));
}

}  // namespace

JobControl::JobControl(comm::Context& ctx, JobControlPaths paths, int64_t total_steps, int64_t batch_per_rank)
    : ctx_(ctx), paths_(std::move(paths)), total_steps_(total_steps), batch_per_rank_(batch_per_rank) {}

void JobControl::Record(int64_t steps_done, double progress, double seconds, double sync_seconds,
                        const NoiseScale& noise) {
  if (paths_.status.empty() || ctx_.rank() != 0) return;
  grad_measured_ = noise.measured();
  grad_sqr_ = noise.grad_sqr();
  grad_var_ = noise.grad_var(1);
  seconds_.push_back(seconds);
  sync_seconds_.push_back(sync_seconds);
  if (SteadySeconds() - last_write_ >= kWriteEverySeconds) Write(steps_done, progress, "running");
}

JobControl::Request JobControl::Check(int64_t max_batch_per_rank) {
  if (paths_.stop.empty() && paths_.batch.empty()) return {};
  int64_t seen[2] = {0, 0};  // stop, batch per rank
  if (ctx_.rank() == 0) {
    seen[0] = !paths_.stop.empty() && std::filesystem::exists(paths_.stop) ? 1 : 0;
    seen[1] = ReadBatchFile(max_batch_per_rank);
  }
  if (ctx_.size() > 1) collective::Broadcast(ctx_, seen, 2, DType::kInt64);
  if (seen[1] < 0) {
    if (ctx_.rank() == 0) std::rethrow_exception(std::exchange(batch_error_, nullptr));
    throw ParseError(paths_.batch, 1, "refused by rank 0 (its error says why)");
  }
  return {seen[0] != 0, seen[1] == batch_per_rank_ ? 0 : seen[1]};
}

int64_t JobControl::ReadBatchFile(int64_t max_batch_per_rank) {
  if (paths_.batch.empty() || !std::filesystem::exists(paths_.batch)) return 0;
  std::ifstream in(paths_.batch);
  std::string line;
  std::getline(in, line);
  std::error_code ignored;  // a file gone already was read by this rank: nothing to undo
  std::filesystem::remove(paths_.batch, ignored);
  try {
    return ParseFieldIn<int64_t>(line, paths_.batch, 1, "batch per rank", 1, max_batch_per_rank);
  } catch (const ParseError&) {
    batch_error_ = std::current_exception();  // thrown once every rank knows
    return -1;
  }
}

void JobControl::SetBatchPerRank(int64_t batch_per_rank) {
  batch_per_rank_ = batch_per_rank;
  seconds_.clear();
  sync_seconds_.clear();
}

void JobControl::Finish(int64_t steps_done, double progress, bool stopped) {
  if (!paths_.status.empty() && ctx_.rank() == 0) Write(steps_done, progress, stopped ? "stopped" : "done");
}

void JobControl::Finish(const TrainLoopResult& ran, std::ostream* log, bool checkpointed) {
  if (log && ran.stopped) {
    *log << fmt::format("stopped at step {} of {}{}\n", ran.steps_done, total_steps_,
                        checkpointed ? " (checkpoint written)" : "");
    log->flush();
  }
  Finish(ran.steps_done, static_cast<double>(ran.steps_done), ran.stopped);
}

void JobControl::Write(int64_t steps_done, double progress, const std::string& state) {
  const double step = RecentMedian(seconds_), sync = RecentMedian(sync_seconds_);
  WriteJobStatus(paths_.status, {.step = steps_done,
                                 .total_steps = total_steps_,
                                 .progress = progress,
                                 .ranks = ctx_.size(),
                                 .batch_per_rank = batch_per_rank_,
                                 .step_seconds = step,
                                 .sync_seconds = sync,
                                 .grad_measured = grad_measured_,
                                 .grad_sqr = grad_sqr_,
                                 .grad_var = grad_var_,
                                 .state = state});
  last_write_ = SteadySeconds();
}

}  // namespace parasol::dl
