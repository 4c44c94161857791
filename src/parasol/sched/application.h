// A training application as the cluster simulator sees it, from measured profiles (the Pollux
// artifact's format, see ../shared/data/pollux/README.md): step and synchronisation time per
// placement and per-GPU batch, and per epoch of training at each measured total batch size the
// progress, iterations and gradient statistics.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace parasol::sched {

struct StepTime {
  double step = 0;  // seconds per iteration
  double sync = 0;  // of which synchronisation
};

struct EpochStats {
  double progress = 0;  // scale-invariant iterations at the end of the epoch
  double iteration = 0;
  double metric = 0;
  double grad_sqr = 0;  // squared norm of the gradient
  double grad_var = 0;  // variance of the gradient
};

class Application {
 public:
  // Reads DIR/placements.csv, DIR/scalability.csv and DIR/validation-B.csv. Throws IoError or
  // ParseError "file:line: ...". The name is the folder's; epochs and the per-GPU batch limit
  // come from the table of known applications (bert 2, cifar10 100, ncf 10, imagenet 90,
  // deepspeech2 80, yolov3 50 with at most 8 per GPU), else the shortest validation file.
  static Application Load(const std::string& dir);

  const std::string& name() const { return name_; }
  int max_epochs() const { return max_epochs_; }
  int init_batch_size() const { return init_batch_size_; }
  int max_batch_size() const { return max_batch_size_; }
  int min_local_bsz() const { return min_local_bsz_; }
  int max_local_bsz() const { return max_local_bsz_; }

  // Progress at the end of `epoch` epochs (the smallest over the measured batch sizes).
  double Progress(int epoch) const;
  // Gradient statistics during `epoch` at total batch `batch`, interpolated between the measured
  // batch sizes around it. REQUIRES: init_batch_size <= batch <= max_batch_size.
  std::pair<double, double> GradStats(double batch, int epoch) const;
  // Iterations done after `epoch` epochs at total batch `batch` (interpolated like GradStats).
  double Iterations(double batch, int epoch) const;
  // Step and sync time of one iteration with `placement` (GPUs per node, nodes in any order) at
  // `local_bsz` per GPU: measured placements interpolate over the batch; others over nodes,
  // replicas and batch from the placement averages and the large-scale measurements.
  StepTime Throughput(std::vector<int> placement, double local_bsz) const;

 private:
  struct Point {
    double local_bsz;
    StepTime t;
  };
  // Linear interpolation over local_bsz in a sorted series (clamped at its ends).
  static StepTime Interpolate(const std::vector<Point>& series, double local_bsz);
  // The measured batch sizes around `batch` and the weight of the upper one.
  struct Bracket {
    const std::vector<EpochStats>* lo;
    const std::vector<EpochStats>* hi;
    double f;
  };
  Bracket Around(double batch) const;

  std::string name_;
  int max_epochs_ = 0, init_batch_size_ = 0, max_batch_size_ = 0, min_local_bsz_ = 0, max_local_bsz_ = 0;
  std::map<uint64_t, std::vector<Point>> by_placement_;         // canonical placement id -> series
  std::map<std::pair<int, int>, std::vector<Point>> by_shape_;  // (nodes, replicas) -> series
  std::map<int, std::vector<EpochStats>> validation_;           // total batch -> epochs
};

}  // namespace parasol::sched
