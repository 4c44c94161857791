#include "parasol/dl/job_control.h"

#include <chrono>
#include <filesystem>

#include "parasol/collective/collectives.h"
#include "parasol/core/job_status.h"
#include "parasol/core/stats.h"

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

JobControl::JobControl(comm::Context& ctx, std::string status_path, std::string stop_path, int64_t total_steps,
                       int64_t batch_per_rank)
    : ctx_(ctx),
      status_path_(std::move(status_path)),
      stop_path_(std::move(stop_path)),
      total_steps_(total_steps),
      batch_per_rank_(batch_per_rank) {}

void JobControl::Record(int64_t steps_done, double progress, double seconds, double sync_seconds,
                        const NoiseScale& noise) {
  if (status_path_.empty() || ctx_.rank() != 0) return;
  grad_measured_ = noise.measured();
  grad_sqr_ = noise.grad_sqr();
  grad_var_ = noise.grad_var(1);
  seconds_.push_back(seconds);
  sync_seconds_.push_back(sync_seconds);
  if (SteadySeconds() - last_write_ >= kWriteEverySeconds) Write(steps_done, progress, "running");
}

bool JobControl::StopRequested() {
  if (stop_path_.empty()) return false;
  int32_t stop = ctx_.rank() == 0 && std::filesystem::exists(stop_path_) ? 1 : 0;
  if (ctx_.size() > 1) collective::Broadcast(ctx_, &stop, 1, DType::kInt32);
  return stop != 0;
}

void JobControl::Finish(int64_t steps_done, double progress, bool stopped) {
  if (!status_path_.empty() && ctx_.rank() == 0) Write(steps_done, progress, stopped ? "stopped" : "done");
}

void JobControl::Write(int64_t steps_done, double progress, const std::string& state) {
  const double step = RecentMedian(seconds_), sync = RecentMedian(sync_seconds_);
  WriteJobStatus(status_path_, {.step = steps_done,
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
