#include "parasol/apps/gnn/epoch_figures.h"

#include "parasol/collective/collectives.h"

namespace parasol::apps::gnn {

EpochFigures::EpochFigures(comm::Context& ctx, std::array<double, 3> counts, bool carried, Report report)
    : ctx_(ctx), counts_(counts), carried_(carried), report_(std::move(report)) {}

std::array<double, EpochFigures::kCarried> EpochFigures::Fitted(int epoch, double loss, double correct) {
  Pending& p = pending_[epoch];
  p.local[0] = loss;
  p.local[1] = correct;
  std::array<double, kCarried> carried{loss, correct, 0, 0, 0};
  if (auto before = pending_.find(epoch - 1); before != pending_.end())
    std::copy(before->second.local.begin() + 2, before->second.local.end(), carried.begin() + 2);
  return carried;
}

void EpochFigures::Evaluated(int epoch, std::array<double, 3> eval, std::span<const float> params,
                             double seconds, uint64_t bytes_sent) {
  Pending& p = pending_[epoch];
  std::copy(eval.begin(), eval.end(), p.local.begin() + 2);
  p.seconds = seconds;
  p.bytes_sent = bytes_sent;
  if (!carried_) {
    std::array<double, kCarried> sums = p.local;
    collective::Allreduce<double>(ctx_, sums);
    Complete(epoch, sums, params);
    return;
  }
  p.params.assign(params.begin(), params.end());
}

void EpochFigures::Arrived(int epoch, std::span<const double> sums) {
  if (auto it = pending_.find(epoch); it != pending_.end()) {
    it->second.fit_arrived = true;
    it->second.fit[0] = sums[0];
    it->second.fit[1] = sums[1];
  }
  auto before = pending_.find(epoch - 1);
  if (before == pending_.end() || before->second.reported || !before->second.fit_arrived) return;
  const std::vector<float> params = std::move(before->second.params);
  Complete(epoch - 1, {before->second.fit[0], before->second.fit[1], sums[2], sums[3], sums[4]}, params);
}

void EpochFigures::CompleteAll() {
  std::vector<double> sums;
  std::vector<int> epochs;
  for (const auto& [epoch, p] : pending_) {
    if (p.reported) continue;
    sums.insert(sums.end(), p.local.begin(), p.local.end());
    epochs.push_back(epoch);
  }
  if (epochs.empty()) return;
  collective::Allreduce<double>(ctx_, sums);
  for (size_t k = 0; k < epochs.size(); ++k) {
    std::array<double, kCarried> s;
    std::copy_n(sums.begin() + static_cast<std::ptrdiff_t>(k * kCarried), kCarried, s.begin());
    const std::vector<float> params = std::move(pending_[epochs[k]].params);
    Complete(epochs[k], s, params);
  }
}

void EpochFigures::Complete(int epoch, const std::array<double, kCarried>& sums,
                            std::span<const float> params) {
  auto it = pending_.find(epoch);
  Pending& p = it->second;
  const GnnEpoch e{.epoch = epoch,
                   .seconds = p.seconds,
                   .train_loss = sums[0] / counts_[0],
                   .train_accuracy = sums[1] / counts_[0],
                   .val_loss = counts_[1] > 0 ? sums[2] / counts_[1] : 0,
                   .val_accuracy = counts_[1] > 0 ? sums[3] / counts_[1] : 0,
                   .test_accuracy = counts_[2] > 0 ? sums[4] / counts_[2] : 0,
                   .bytes_sent = p.bytes_sent};
  // Epochs complete in order: the older ones are done with; this one stays (reported) for the
  // next epoch's push, which carries its evaluation.
  p.reported = true;
  p.params.clear();
  pending_.erase(pending_.begin(), it);
  report_(e, params);
}

}  // namespace parasol::apps::gnn
