// A training job in the cluster simulator: it advances through its epochs at the goodput its
// placement and batch size give (throughput from the application's profile times the
// statistical efficiency of its batch), pays a restart delay whenever its allocation changes,
// and completes after its last epoch. Progress is counted in scale-invariant iterations.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "parasol/sched/application.h"
#include "parasol/sched/goodput.h"
#include "parasol/sched/job.h"

namespace parasol::sched {

class SimJob : public Job {
 public:
  // `batch_size` 0: the scheduler chooses it (adaptive); else fixed as the user asked.
  SimJob(std::string name, const Application* app, double submit_time, int replicas, int batch_size);

  const std::string& name() const override { return name_; }
  const Application& app() const { return *app_; }
  double submit_time() const override { return submit_; }
  int requested_replicas() const override { return requested_replicas_; }
  int requested_batch() const { return requested_batch_; }
  const std::vector<int>& placement() const { return placement_; }  // GPUs per node used
  int gpus() const;
  int epoch() const { return epoch_; }
  double progress() const { return progress_; }
  double attained_service() const override { return attained_service_; }
  int restarts() const { return restarts_; }
  std::optional<double> completion_time() const { return completion_; }
  int atomic_bsz() const { return atomic_bsz_; }
  int accum_steps() const { return accum_steps_; }
  int batch_size() const { return gpus() * atomic_bsz_ * (accum_steps_ + 1); }

  // Runs for `seconds` of simulated time.
  void Step(double seconds);
  // New placement (GPUs per node; empty: stopped). A running job restarts: it makes no progress
  // for `restart_penalty_s`.
  void Reallocate(std::vector<int> placement, double restart_penalty_s);
  // Sets the per-GPU batch and accumulation steps (adaptive jobs); REQUIRES a placement.
  void SetBatch(int atomic_bsz, int accum_steps);

  // Adaptive jobs: what the job has measured of itself (iteration times of the configurations it
  // ran, gradient statistics of its current epoch) as a goodput model; nullopt before the first
  // measurement.
  std::optional<GoodputModel> Model() const override;
  // Most GPUs worth considering: twice the most it has run on (its model is not trusted further),
  // at least 1, and no more than its largest batch over the smallest per-GPU batch.
  int MaxUsefulReplicas() const override;
  bool adaptive() const override { return requested_batch_ == 0; }
  BatchLimits batch_limits() const override;
  double remaining_iterations() const override;

 private:
  // Batch for the current placement: the user's (fixed), or the model's best (adaptive).
  void ChooseBatch();
  void Observe(double step, double sync, double grad_sqr, double grad_var);

  std::string name_;
  const Application* app_;
  double submit_;
  int requested_replicas_, requested_batch_;
  std::vector<int> placement_;
  int atomic_bsz_ = 0, accum_steps_ = 0;
  double now_ = 0, rescale_left_ = 0, progress_ = 0, attained_service_ = 0;
  int epoch_ = 0, restarts_ = -1;
  std::optional<double> completion_;
  std::map<std::tuple<int, int, int>, PerfObservation> observed_;  // (nodes, replicas, atomic bsz)
  std::optional<PerfParams> perf_;
  GoodputModel::Corrections corrections_;
  double grad_sqr_ = 0, grad_var_ = 0;
  int max_replicas_run_ = 0;
};

}  // namespace parasol::sched
