// STRADS's schedule(): which coordinates (parameters) a model-parallel round updates together.
// Coordinates are drawn by priority (recent movement), at random, in cyclic order or in a fresh
// random order each sweep (shuffled), then the
// drawn candidates that depend on one already taken are dropped, so that no two strongly
// coupled coordinates are ever updated from the same state.
//
// Deterministic: given the seed and the same reports, every rank computes the same schedule,
// so ranks agree on it without a message. Not thread-safe (one owner per process).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "parasol/core/rng.h"

namespace parasol::modelpar {

// kShuffled: as cyclic, in a new random order each sweep of the working set (LIBLINEAR's L1
// logistic regression's order: on a9a it needs 0.6x the updates cyclic order does).
enum class Order { kPriority, kRandom, kCyclic, kShuffled };
// "priority", "random", "cyclic", "shuffled"; InvalidArgumentError for another name.
Order ParseOrder(std::string_view name);
std::string_view OrderName(Order order);

struct SchedulerOptions {
  Order order = Order::kPriority;
  uint32_t schedule_size = 32;  // U: the most coordinates a round updates together
  // Candidates drawn per round, as a multiple of U: the spares replace dependent ones.
  uint32_t candidate_factor = 2;
  // Two coordinates whose dependency (e.g. |correlation| of Lasso's columns) exceeds this are
  // never in one round; 1 or more turns the check off.
  double dependency_threshold = 0.1;
  // A coordinate's priority is (its last change)^2 + floor: coordinates that stopped moving are
  // still visited now and then.
  double priority_floor = 1e-12;
  uint64_t seed = 1;
};

class CoordinateScheduler {
 public:
  CoordinateScheduler(uint32_t coordinates, const SchedulerOptions& options);

  // The candidates of the next round, best first. Priority order draws without replacement in
  // proportion to priority, after a first sweep that visits every coordinate once (a coordinate
  // never updated has no measured priority yet); random draws uniformly; cyclic takes the next
  // coordinates of the working set (see Restrict) in its order; shuffled too, the order drawn
  // anew at the start of each sweep.
  // Valid until the next call (the buffers are the scheduler's: a round allocates nothing).
  const std::vector<uint32_t>& Candidates();

  // schedule()'s second half: from `candidates` (the last Candidates()), in order, the first U
  // that have no dependency above the threshold on one already taken. dependency(a, b) is asked
  // for candidate positions a > b only, and only while the check is on. Cyclic order resumes
  // after the last candidate taken.
  // Valid until the next call.
  const std::vector<uint32_t>& Select(std::span<const uint32_t> candidates,
                                      const std::function<double(size_t, size_t)>& dependency);

  bool checks_dependencies() const { return options_.dependency_threshold < 1; }

  // A coordinate moved by `delta` (its priority becomes delta^2 + floor). Ignored for one
  // outside the working set.
  void Report(uint32_t coordinate, double delta);

  // Draw from now on only from `coordinates` (a working set, e.g. Lasso's nonzero weights and the
  // coordinates that violate their optimality condition): priority order with the change each
  // would make as its priority, cyclic order in the order given, from its first (or, when rounds
  // but no whole sweep came since the last Restrict, from the first coordinate above the last one
  // taken: checks every few rounds would otherwise update the same few forever), shuffled order
  // in a random one. Empty: every
  // coordinate again (as at the start). As LIBLINEAR's and glmnet's shrinking, a coordinate at
  // zero that would stay there is not visited until the next check. O(n) once, and each draw
  // then costs O(log |set|): with a million coordinates and a few thousand in play, draws stay
  // in cache.
  void Restrict(std::span<const uint32_t> coordinates, std::span<const double> deltas);
  // In cyclic and shuffled order: `coordinate` (in the working set) is left out of the sweeps until
  // the next Restrict, as glmnet and LIBLINEAR stop visiting a zero weight that stays zero between
  // two full passes; the last coordinate still swept never rests. Other orders ignore it. It takes
  // effect at once (a candidate already drawn is still updated) and frees its slot at the end of
  // the sweep.
  void Rest(uint32_t coordinate);
  // The coordinates draws come from (those resting left out).
  size_t working_set_size() const { return members_.size() - resting_count_; }

  const SchedulerOptions& options() const { return options_; }
  uint32_t coordinates() const { return n_; }

 private:
  // Priorities live in a Fenwick tree over the working set's slots: drawing in proportion and
  // updating one are O(log m).
  void SetWeight(uint32_t slot, double w);
  void Add(uint32_t slot, double change);
  void Rebuild();
  uint32_t Find(double mass) const;  // the slot whose cumulative range holds `mass`
  // k, or the first slot with weight when k's is 0 (m() if none has).
  uint32_t FirstWeighted(uint32_t k) const;
  double Total() const;
  uint32_t m() const { return static_cast<uint32_t>(members_.size()); }

  uint32_t n_;
  SchedulerOptions options_;
  bool sweeps() const { return options_.order == Order::kCyclic || options_.order == Order::kShuffled; }
  // Shuffled order: a sweep's order, drawn at its start.
  void Reshuffle();

  Rng rng_;
  std::vector<uint32_t> members_;  // slot -> coordinate: the working set
  std::vector<int32_t> slot_;      // coordinate -> slot, -1 outside the working set
  std::vector<double> tree_;       // Fenwick tree of the slots' weights, 1-based
  std::vector<double> weight_;     // each slot's weight
  uint32_t unvisited_;             // slots still at kUnvisited
  uint64_t updates_ = 0;           // weight changes since the tree was last rebuilt
  uint32_t cyclic_next_ = 0;
  // Cyclic order: the last coordinate Select took, and since the last Restrict, the rounds taken
  // and whether a sweep ended.
  int64_t last_taken_ = -1;
  uint64_t rounds_since_restrict_ = 0;
  bool swept_ = false;
  // Sweeping orders: per slot, whether its coordinate rests (see Rest); the slots leave members_
  // when a sweep ends.
  std::vector<uint8_t> resting_;
  uint32_t resting_count_ = 0;
  // Candidates()'s offsets from cyclic_next_ (resting slots are skipped), for Select to resume.
  std::vector<uint32_t> candidate_offsets_;
  // The sweep has ended: resting slots leave, and shuffled order draws its next order.
  void EndSweep(uint32_t next);
  // Kept between calls: a round of a block of one takes a few hundred nanoseconds, as much as
  // allocating these.
  std::vector<uint32_t> candidates_, taken_;
  std::vector<size_t> positions_;
  std::vector<uint32_t> drawn_slots_;  // Candidates()'s draws (priority order)
  std::vector<double> drawn_weights_;
};

}  // namespace parasol::modelpar
