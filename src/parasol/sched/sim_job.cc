#include "parasol/sched/sim_job.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parasol::sched {

SimJob::SimJob(std::string name, const Application* app, double submit_time, int replicas, int batch_size)
    : name_(std::move(name)), app_(app), submit_(submit_time), requested_replicas_(replicas), requested_batch_(batch_size) {}

int SimJob::gpus() const { return std::accumulate(placement_.begin(), placement_.end(), 0); }

// The user's total batch over this placement: per-GPU share, split into accumulation steps
// when it exceeds what a GPU holds.
void SimJob::FixedBatch() {
  const int replicas = gpus();
  const int batch = requested_batch_ > 0 ? requested_batch_ : std::max(app_->init_batch_size(), app_->min_local_bsz() * replicas);
  const int local = static_cast<int>(std::ceil(static_cast<double>(batch) / replicas - 1e-8));
  accum_steps_ = static_cast<int>(std::ceil(static_cast<double>(local) / app_->max_local_bsz() - 1e-8)) - 1;
  if (replicas == 1 && batch > app_->init_batch_size()) accum_steps_ = std::max(1, accum_steps_);
  atomic_bsz_ = static_cast<int>(std::ceil(static_cast<double>(local) / (accum_steps_ + 1) - 1e-8));
  atomic_bsz_ = std::min(atomic_bsz_, app_->max_batch_size() / (replicas * (accum_steps_ + 1)));
}

void SimJob::SetBatch(int atomic_bsz, int accum_steps) {
  atomic_bsz_ = atomic_bsz;
  accum_steps_ = accum_steps;
}

void SimJob::Reallocate(std::vector<int> placement, double restart_penalty_s) {
  placement.erase(std::remove(placement.begin(), placement.end(), 0), placement.end());
  placement_ = std::move(placement);
  if (placement_.empty()) {
    atomic_bsz_ = 0;
    return;
  }
  FixedBatch();
  rescale_left_ = restart_penalty_s;
  ++restarts_;
}

double SimJob::Goodput(const std::vector<int>& placement, int atomic_bsz, int accum_steps) const {
  const int replicas = std::accumulate(placement.begin(), placement.end(), 0);
  const double batch = static_cast<double>(replicas) * atomic_bsz * (accum_steps + 1);
  const double scale = batch / app_->init_batch_size();
  const StepTime t = app_->Throughput(placement, atomic_bsz);
  const auto [sqr, var] = app_->GradStats(batch, epoch_);
  // Progress per sample relative to the initial batch (AdaScale's gain).
  const double gain = (var + sqr) / (var / scale + sqr);
  return gain / (t.step + (t.step - t.sync) * accum_steps);
}

void SimJob::Step(double seconds) {
  if (placement_.empty() || completion_) {
    now_ += seconds;
    return;
  }
  const double delay = std::min(rescale_left_, seconds);
  now_ += delay;
  attained_service_ += delay * gpus();
  rescale_left_ -= delay;
  seconds -= delay;
  while (seconds > 0 && !completion_) {
    const double goodput = Goodput(placement_, atomic_bsz_, accum_steps_);
    const double next = app_->Progress(epoch_ + 1);
    if (progress_ + goodput * seconds < next) {
      progress_ += goodput * seconds;
      now_ += seconds;
      attained_service_ += seconds * gpus();
      seconds = 0;
      break;
    }
    // The epoch ends inside this step (whole seconds, as the reference simulator counts).
    const double delta = std::round((next - progress_) / goodput);
    ++epoch_;
    if (epoch_ >= app_->max_epochs()) completion_ = now_ + delta;
    progress_ = next;
    now_ += delta;
    attained_service_ += delta * gpus();
    seconds -= delta;
  }
  now_ += seconds;
}

}  // namespace parasol::sched
