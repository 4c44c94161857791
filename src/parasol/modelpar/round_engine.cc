#include "parasol/modelpar/round_engine.h"

#include <algorithm>
#include <exception>

#include "parasol/collective/collectives.h"
#include "parasol/core/error.h"
#include "parasol/core/task_group.h"

namespace parasol::modelpar {

namespace {
uint64_t PairKey(uint32_t a, uint32_t b) { return a < b ? (uint64_t{a} << 32) | b : (uint64_t{b} << 32) | a; }
}  // namespace

RoundEngine::RoundEngine(comm::Context& ctx, CoordinateProgram& program, uint32_t coordinates,
                         const EngineOptions& options)
    : ctx_(ctx), program_(program), options_(options), scheduler_(coordinates, options.schedule) {
  if (options_.workers == 0) throw InvalidArgumentError("--threads must be at least 1");
  if (options_.workers > 1) pool_ = std::make_unique<ThreadPool>(options_.workers);
  shares_.resize(options_.workers);
}

void RoundEngine::ForEachWorker(const std::function<void(size_t)>& fn) {
  if (!pool_) return fn(0);
  pool_->ParallelFor(0, options_.workers, fn);
}

void RoundEngine::SumOverRanks(std::span<double> values) {
  if (ctx_.size() > 1 && !values.empty()) collective::Allreduce(ctx_, values);
}

const std::vector<uint32_t>& RoundEngine::Schedule() {
  const std::vector<uint32_t>& candidates = scheduler_.Candidates();
  return scheduler_.Select(candidates, [&](size_t a, size_t b) {
    if (program_.DependencyCost(candidates[a], candidates[b]) < options_.dependency_cache_cost)
      return program_.Dependency(candidates[a], candidates[b]);
    const uint64_t key = PairKey(candidates[a], candidates[b]);
    auto it = dependency_.find(key);
    if (it != dependency_.end()) return static_cast<double>(it->second);
    if (dependency_.size() >= options_.dependency_cache_pairs) dependency_.clear();
    const double d = program_.Dependency(candidates[a], candidates[b]);
    dependency_.emplace(key, static_cast<float>(d));
    return d;
  });
}

void RoundEngine::UpdateAndScheduleNext(size_t values) {
  auto update = [&](size_t w) {
    shares_[w].assign(values, 0.0);
    program_.Update(w, block_, shares_[w]);
  };
  if (!pool_) {
    update(0);
    next_ = Schedule();
    return;
  }
  TaskGroup updates(pool_.get());
  for (size_t w = 0; w < options_.workers; ++w) updates.Run([&update, w] { update(w); });
  try {
    next_ = Schedule();
  } catch (...) {
    updates.Fail(std::current_exception());
  }
  updates.Wait();
}

std::span<const uint32_t> RoundEngine::Round() {
  if (!scheduled_) {
    block_ = Schedule();
    scheduled_ = true;
  }
  const size_t values = block_.size() * program_.partials_per_coordinate();
  UpdateAndScheduleNext(values);
  sums_.assign(values, 0.0);
  for (const auto& s : shares_) {  // in worker order: the same sum on every run
    for (size_t i = 0; i < values; ++i) sums_[i] += s[i];
  }
  SumOverRanks(sums_);
  deltas_.assign(block_.size(), 0.0);
  program_.Aggregate(block_, sums_, deltas_);
  ForEachWorker([&](size_t w) { program_.Commit(w, block_, deltas_); });
  for (size_t i = 0; i < block_.size(); ++i) {
    scheduler_.Report(block_[i], deltas_[i]);
    if (deltas_[i] == 0 && program_.AtRest(block_[i])) scheduler_.Rest(block_[i]);
  }
  ++rounds_;
  updates_ += block_.size();
  done_.swap(block_);  // the buffers change places: a round allocates nothing
  block_.swap(next_);
  return done_;
}

}  // namespace parasol::modelpar
