// STRADS's round loop: schedule() picks a block of coordinates that do not depend on each other,
// every worker runs update() on its data shard, the partial results are summed over the
// process's workers and over the ranks, and aggregate() commits the new values, identically on
// every rank (the sum is bitwise the same everywhere, so no rank broadcasts a model).
//
// Pipelined: round t+1's block is scheduled while round t's update runs (on the driving thread,
// while the workers compute; in sequence when there is one worker). The price is staleness of
// one round in the priorities: round t+1's candidates are drawn before round t's changes are
// known, with any number of threads, so results do not depend on it. Values are never stale:
// round t+1 updates from the state round t committed. Every rank computes the same schedule
// (same seed, same reports, dependencies from data every rank holds): no scheduling messages.
//
// Threading: one thread drives an engine; workers run on its pool. The CoordinateProgram's Update and
// Commit run concurrently for different workers (each touches its own shard), and Dependency
// on the driving thread at the same time as Update (it may read only what Update leaves
// alone); Aggregate runs on the driving thread alone.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "parasol/comm/context.h"
#include "parasol/core/thread_pool.h"
#include "parasol/modelpar/coordinate_scheduler.h"

namespace parasol::modelpar {

// What a model-parallel program supplies: its update() and aggregate(), and how two of its
// coordinates depend on each other.
class CoordinateProgram {
 public:
  virtual ~CoordinateProgram() = default;
  // Numbers update() produces per scheduled coordinate.
  virtual size_t partials_per_coordinate() const { return 1; }
  // update(): worker `worker`'s share of the results for `block`, computed on its data shard,
  // into `out` (block.size() x partials_per_coordinate(), zeroed). Shares are summed.
  virtual void Update(size_t worker, std::span<const uint32_t> block, std::span<double> out) = 0;
  // How strongly two coordinates depend on each other, in [0, 1] (e.g. Lasso: the |correlation|
  // of their columns). The same on every rank.
  virtual double Dependency(uint32_t a, uint32_t b) const = 0;
  // About how many operations Dependency(a, b) costs. The engine caches the dependencies that
  // cost more than a lookup in its cache would (a pair of very sparse columns costs less).
  virtual size_t DependencyCost(uint32_t /*a*/, uint32_t /*b*/) const { return SIZE_MAX; }
  // aggregate(): from the summed results, commits the block's new values and returns each
  // coordinate's change in `deltas`. Must be deterministic: every rank runs it on the same sums.
  virtual void Aggregate(std::span<const uint32_t> block, std::span<const double> sums,
                         std::span<double> deltas) = 0;
  // Brings worker `worker`'s shard up to date with the committed changes.
  virtual void Commit(size_t worker, std::span<const uint32_t> block, std::span<const double> deltas) = 0;
  // Whether a coordinate that an update did not move sits where the model holds it (an L1 model's
  // zero weight): the scheduler then rests it until its working set is next restricted
  // (CoordinateScheduler::Rest). Asked after Aggregate, on the driving thread.
  virtual bool AtRest(uint32_t /*coordinate*/) const { return false; }
};

struct EngineOptions {
  SchedulerOptions schedule;
  uint32_t workers = 1;  // worker threads in this process, each with its own data shard
  // Dependencies already computed are kept (priority scheduling keeps drawing the same
  // coordinates) when they cost at least dependency_cache_cost; the cache is emptied when it
  // holds dependency_cache_pairs.
  size_t dependency_cache_pairs = size_t{1} << 22;
  size_t dependency_cache_cost = 64;
};

class RoundEngine {
 public:
  // `ctx` and `program` must outlive the engine. Collective: every rank constructs one.
  RoundEngine(comm::Context& ctx, CoordinateProgram& program, uint32_t coordinates,
              const EngineOptions& options);

  // Runs one round (collective); returns the block it updated, valid until the next call.
  std::span<const uint32_t> Round();

  // Runs fn(worker) for every worker of this process, in parallel, and waits.
  void ForEachWorker(const std::function<void(size_t)>& fn);
  // Sums `values` over the ranks, in place (collective; the same result on every rank).
  void SumOverRanks(std::span<double> values);

  CoordinateScheduler& scheduler() { return scheduler_; }
  uint32_t workers() const { return options_.workers; }
  uint64_t rounds() const { return rounds_; }
  uint64_t updates() const { return updates_; }

 private:
  // schedule(): candidates drawn, then the dependent ones dropped (dependencies cached).
  const std::vector<uint32_t>& Schedule();
  // Runs every worker's update() into shares_ and, meanwhile, schedules the next round (next_).
  void UpdateAndScheduleNext(size_t values);

  comm::Context& ctx_;
  CoordinateProgram& program_;
  EngineOptions options_;
  CoordinateScheduler scheduler_;
  std::unique_ptr<ThreadPool> pool_;  // none with one worker: it runs on the driving thread
  std::unordered_map<uint64_t, float> dependency_;
  std::vector<uint32_t> block_;
  std::vector<uint32_t> done_;               // the block the last round updated
  std::vector<uint32_t> next_;               // the block the next round updates, once scheduled
  std::vector<std::vector<double>> shares_;  // per worker
  std::vector<double> sums_, deltas_;
  bool scheduled_ = false;
  uint64_t rounds_ = 0, updates_ = 0;
};

}  // namespace parasol::modelpar
