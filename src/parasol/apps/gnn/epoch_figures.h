// The figures of each epoch (the training pass's loss and accuracy; validation and test after the
// step), summed over ranks. Synchronous training sums them with a small all-reduce per epoch.
// Under a staleness bound that all-reduce would be the one wait left in an epoch, and over a
// network it queues behind the epoch's ghost rows: the figures then travel with the gradient
// pushes to the parameter server instead (the training pass's with its own epoch's push, the
// evaluation with the next one), and an epoch is reported S + 1 epochs after it ran.
//
// Threading: one thread per rank; every rank makes the same calls in the same order, so every
// rank reports the same epochs in the same order.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "parasol/apps/gnn/gnn_trainer.h"
#include "parasol/comm/context.h"

namespace parasol::apps::gnn {

class EpochFigures {
 public:
  // The doubles a push carries.
  static constexpr size_t kCarried = 5;
  // Runs once per epoch, in order, with the global figures and the parameters after its step.
  using Report = std::function<void(const GnnEpoch&, std::span<const float> params)>;

  // `counts`: the vertices of each split (train, validation, test) over the whole graph.
  // `carried`: figures travel with the pushes (a staleness bound) rather than by all-reduce.
  EpochFigures(comm::Context& ctx, std::array<double, 3> counts, bool carried, Report report);

  // This rank's sums of `epoch`'s training pass (loss, correct predictions); returns what the
  // epoch's push carries: these, and the evaluation of the epoch before.
  std::array<double, kCarried> Fitted(int epoch, double loss, double correct);
  // This rank's sums of the evaluation after `epoch`'s step (validation loss and correct, test
  // correct), the parameters after it and the epoch's seconds and bytes so far. Synchronous:
  // sums over ranks now (collective) and reports the epoch.
  void Evaluated(int epoch, std::array<double, 3> eval, std::span<const float> params, double seconds,
                 uint64_t bytes_sent);
  // The sums a push handed back, of the push of `epoch`: completes the epoch before.
  void Arrived(int epoch, std::span<const double> sums);
  // Sums every epoch still waiting for its figures over ranks now (collective) and reports them.
  void CompleteAll();

 private:
  struct Pending {
    std::array<double, kCarried> local{};  // fit (2), then the evaluation (3)
    bool fit_arrived = false, reported = false;
    double fit[2] = {0, 0};  // summed over ranks
    std::vector<float> params;
    double seconds = 0;
    uint64_t bytes_sent = 0;
  };
  void Complete(int epoch, const std::array<double, kCarried>& sums, std::span<const float> params);

  comm::Context& ctx_;
  const std::array<double, 3> counts_;
  const bool carried_;
  Report report_;
  std::map<int, Pending> pending_;
};

}  // namespace parasol::apps::gnn
