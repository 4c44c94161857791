#include "parasol/apps/gnn/gradient_table.h"

#include <algorithm>

#include "parasol/core/error.h"

namespace parasol::apps::gnn {

namespace {

constexpr uint32_t kTable = 1;
constexpr size_t kRowWidth = 4096;
constexpr auto kIdleSleep = std::chrono::microseconds(1000);

}  // namespace

GradientTable::GradientTable(comm::Context& ctx, size_t size, size_t extra, uint32_t staleness,
                             std::chrono::milliseconds timeout_ms)
    : size_(size),
      extra_(extra),
      chunks_(std::max<size_t>(1, (size + extra + kRowWidth - 1) / kRowWidth)),
      rank_(ctx.rank()),
      ranks_(ctx.size()),
      staleness_(staleness),
      slots_(2 * static_cast<uint64_t>(staleness) + 2),
      // One exchange per epoch: the communication thread polls each millisecond when idle, which
      // leaves the cores to the epoch's work (every 20 us cost 2 ranks on 2 cores a third of it).
      ps_(std::make_unique<ps::ParameterServer>(
          ctx, ps::PsOptions{.workers_per_process = 1, .timeout_ms = timeout_ms, .idle_sleep = kIdleSleep})),
      pushed_(slots_, std::vector<double>(size + extra, 0.0)),
      delta_(kRowWidth),
      row_(kRowWidth) {
  ps_->CreateTable({.id = kTable,
                    .kind = ps::RowKind::kDense,
                    .dtype = DType::kFloat64,
                    .width = kRowWidth,
                    .num_rows = slots_ * static_cast<uint64_t>(ranks_) * chunks_,
                    .consistency = ps::Consistency::kSsp,
                    .staleness = staleness,
                    // Each clock reads another slot's rows: asking again for the cached ones
                    // (the last slot's) would be wasted.
                    .refresh_cached_rows = false});
  worker_ = ps_->CreateWorker(0);
}

uint64_t GradientTable::RowOf(uint64_t slot, int rank, size_t chunk) const {
  return (slot * static_cast<uint64_t>(ranks_) + static_cast<uint64_t>(rank)) * chunks_ + chunk;
}

bool GradientTable::Push(std::span<const float> grad, std::span<const double> extra, std::vector<float>* sum,
                         std::vector<double>* extra_sum) {
  const size_t total = size_ + extra_;
  if (grad.size() != size_ || extra.size() != extra_)
    throw InternalError("gradient table: a push of another size");
  values_.assign(grad.begin(), grad.end());
  values_.insert(values_.end(), extra.begin(), extra.end());
  const uint64_t push = worker_->clock();
  auto table = worker_->GetTable<double>(kTable);
  std::vector<double>& last = pushed_[push % slots_];
  for (size_t c = 0; c < chunks_; ++c) {
    const size_t begin = c * kRowWidth, end = std::min(total, begin + kRowWidth);
    std::fill(delta_.begin(), delta_.end(), 0.0);
    for (size_t i = begin; i < end; ++i) delta_[i - begin] = values_[i] - last[i];
    table.IncRow(RowOf(push % slots_, rank_, c), delta_);
  }
  last.swap(values_);
  worker_->Clock();
  bool got = false;
  if (push >= staleness_) {
    const uint64_t slot = (push - staleness_) % slots_;
    table.Prefetch(SlotRows(slot));
    total_.assign(total, 0.0);
    for (int r = 0; r < ranks_; ++r) {
      for (size_t c = 0; c < chunks_; ++c) {
        table.Get(RowOf(slot, r, c)).CopyTo(std::span<double>(row_));
        const size_t begin = c * kRowWidth, end = std::min(total, begin + kRowWidth);
        for (size_t i = begin; i < end; ++i) total_[i] += row_[i - begin];
      }
    }
    sum->resize(size_);
    for (size_t i = 0; i < size_; ++i) (*sum)[i] = static_cast<float>(total_[i]);
    extra_sum->assign(total_.begin() + static_cast<std::ptrdiff_t>(size_), total_.end());
    got = true;
  }
  // Under a bound the next read's rows (of push + 1 - S) are asked for now: the replies then
  // travel during the next epoch instead of queueing behind its other traffic when it ends.
  if (staleness_ > 0 && push + 1 >= staleness_)
    table.PrefetchNextClock(SlotRows((push + 1 - staleness_) % slots_));
  return got;
}

std::span<const uint64_t> GradientTable::SlotRows(uint64_t slot) {
  rows_.clear();
  for (int r = 0; r < ranks_; ++r)
    for (size_t c = 0; c < chunks_; ++c) rows_.push_back(RowOf(slot, r, c));
  return rows_;
}

void GradientTable::Finish() {
  if (finished_) return;
  finished_ = true;
  worker_.reset();
  ps_->Shutdown();
}

}  // namespace parasol::apps::gnn
