#include "parasol/sched/sim_job.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parasol::sched {

SimJob::SimJob(std::string name, const Application* app, double submit_time, int replicas, int batch_size)
    : name_(std::move(name)),
      app_(app),
      submit_(submit_time),
      requested_replicas_(replicas),
      requested_batch_(batch_size) {}

int SimJob::gpus() const { return std::accumulate(placement_.begin(), placement_.end(), 0); }

// Fixed: the user's total batch over this placement, split per GPU, with accumulation steps
// when a GPU's share exceeds what it holds. Adaptive: the model's best batch for the placement
// (before any measurement: the initial batch, or the smallest per-GPU batch on every GPU).
void SimJob::ChooseBatch() {
  const int replicas = gpus();
  auto model = adaptive() ? Model() : std::nullopt;
  if (model) {
    const int nodes = static_cast<int>(placement_.size());
    auto c = model->Optimize(nodes, replicas, app_->max_batch_size(), app_->min_local_bsz(),
                             app_->max_local_bsz());
    if (c.goodput > 0) {
      atomic_bsz_ = c.atomic_bsz;
      accum_steps_ = c.accum_steps;
      atomic_bsz_ = std::min(atomic_bsz_, app_->max_batch_size() / (replicas * (accum_steps_ + 1)));
      return;
    }
  }
  const int batch = requested_batch_ > 0
                        ? requested_batch_
                        : std::max(app_->init_batch_size(), app_->min_local_bsz() * replicas);
  const int local = static_cast<int>(std::ceil(static_cast<double>(batch) / replicas - 1e-8));
  const BatchSplit split =
      SplitLocalBatch(local, app_->max_local_bsz(), replicas == 1 && batch > app_->init_batch_size());
  atomic_bsz_ = split.atomic;
  accum_steps_ = split.accum;
  atomic_bsz_ = std::min(atomic_bsz_, app_->max_batch_size() / (replicas * (accum_steps_ + 1)));
}

std::optional<GoodputModel> SimJob::Model() const {
  if (!perf_) return std::nullopt;
  GoodputModel model(*perf_, grad_sqr_, grad_var_, app_->init_batch_size());
  model.SetCorrections(corrections_);
  return model;
}

BatchLimits SimJob::batch_limits() const {
  return {app_->init_batch_size(), app_->max_batch_size(), app_->min_local_bsz(), app_->max_local_bsz()};
}

double SimJob::remaining_iterations() const { return app_->Progress(app_->max_epochs()) - progress_; }

int SimJob::MaxUsefulReplicas() const {
  const int by_batch = std::max(1, app_->max_batch_size() / app_->min_local_bsz());
  return std::min(std::max(1, 2 * max_replicas_run_), by_batch);
}

void SimJob::Observe(double step, double sync, double grad_sqr, double grad_var) {
  grad_sqr_ = grad_sqr, grad_var_ = grad_var;
  if (!adaptive()) return;
  const int nodes = static_cast<int>(placement_.size()), replicas = gpus();
  max_replicas_run_ = std::max(max_replicas_run_, replicas);
  const PerfObservation seen{nodes, replicas, static_cast<double>(atomic_bsz_), step - sync, step};
  if (!observed_.try_emplace({nodes, replicas, atomic_bsz_}, seen).second) return;
  std::vector<PerfObservation> obs;
  for (const auto& [k, o] : observed_) obs.push_back(o);
  perf_ = FitPerfParams(obs);
  corrections_ = GoodputModel::MeasuredCorrections(*perf_, obs);
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
  ChooseBatch();
  rescale_left_ = restart_penalty_s;
  ++restarts_;
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
    // True (profiled) iteration time and gradient statistics of this configuration and epoch;
    // an adaptive job records them as its own measurements.
    const StepTime t = app_->Throughput(placement_, atomic_bsz_);
    const auto [sqr, var] = app_->GradStats(batch_size(), epoch_);
    if (adaptive()) Observe(t.step, t.sync, sqr, var);
    const double scale = static_cast<double>(batch_size()) / app_->init_batch_size();
    const double goodput = AdaScaleGain(sqr, var, scale) / (t.step + (t.step - t.sync) * accum_steps_);
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
    if (adaptive() && !completion_) ChooseBatch();  // statistics change with the epoch
  }
  now_ += seconds;
}

}  // namespace parasol::sched
