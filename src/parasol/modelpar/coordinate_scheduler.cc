#include "parasol/modelpar/coordinate_scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "parasol/core/enum_names.h"
#include "parasol/core/error.h"

namespace parasol::modelpar {

namespace {
// The weight of a coordinate never updated: so large that all of them are drawn before any
// measured one, which makes the first rounds a random sweep (the tree is rebuilt after it, so
// the huge values leave no rounding behind).
constexpr double kUnvisited = 1e200;

size_t LowBit(size_t k) { return k & (~k + 1); }
}  // namespace

constexpr EnumName<Order> kOrderNames[] = {{Order::kPriority, "priority"},
                                           {Order::kRandom, "random"},
                                           {Order::kCyclic, "cyclic"},
                                           {Order::kShuffled, "shuffled"}};

Order ParseOrder(std::string_view name) { return ParseName(kOrderNames, name, "--scheduler"); }

std::string_view OrderName(Order order) { return NameOf(kOrderNames, order); }

CoordinateScheduler::CoordinateScheduler(uint32_t coordinates, const SchedulerOptions& options)
    : n_(coordinates), options_(options), rng_(options.seed), unvisited_(coordinates) {
  if (n_ == 0) throw InvalidArgumentError("scheduler: no coordinates to schedule");
  if (options_.schedule_size == 0) throw InvalidArgumentError("--schedule-size must be at least 1");
  if (options_.candidate_factor == 0)
    throw InvalidArgumentError("scheduler: candidate factor must be at least 1");
  if (!(options_.dependency_threshold >= 0))
    throw InvalidArgumentError("--dependency-threshold must be at least 0");
  if (!(options_.priority_floor > 0))
    throw InvalidArgumentError("scheduler: the priority floor must be positive");
  Restrict({}, {});
}

void CoordinateScheduler::Restrict(std::span<const uint32_t> coordinates, std::span<const double> deltas) {
  const bool priority = options_.order == Order::kPriority;
  slot_.assign(n_, -1);
  members_.clear();
  weight_.clear();
  cyclic_next_ = 0;
  resting_count_ = 0;
  if (coordinates.empty()) {  // everything, not yet visited: a random sweep comes first
    for (uint32_t j = 0; j < n_; ++j) slot_[j] = static_cast<int32_t>(j), members_.push_back(j);
    if (priority) weight_.assign(n_, kUnvisited);
    unvisited_ = n_;
  } else {
    for (size_t i = 0; i < coordinates.size(); ++i) {
      if (slot_[coordinates[i]] >= 0) continue;
      slot_[coordinates[i]] = static_cast<int32_t>(members_.size());
      members_.push_back(coordinates[i]);
      if (priority) weight_.push_back(deltas[i] * deltas[i] + options_.priority_floor);
    }
    unvisited_ = 0;
  }
  if (priority) Rebuild();
  resting_.assign(members_.size(), 0);
  if (options_.order == Order::kShuffled) Reshuffle();
  if (options_.order == Order::kCyclic && rounds_since_restrict_ > 0 && !swept_) {
    const auto above =
        std::find_if(members_.begin(), members_.end(), [&](uint32_t j) { return int64_t{j} > last_taken_; });
    cyclic_next_ = above == members_.end() ? 0 : static_cast<uint32_t>(above - members_.begin());
  }
  swept_ = false;
  rounds_since_restrict_ = 0;
}

void CoordinateScheduler::Rest(uint32_t coordinate) {
  if (!sweeps() || slot_[coordinate] < 0) return;
  const auto slot = static_cast<uint32_t>(slot_[coordinate]);
  if (resting_[slot] || working_set_size() <= 1) return;
  resting_[slot] = 1;
  ++resting_count_;
}

void CoordinateScheduler::EndSweep(uint32_t next) {
  swept_ = true;
  if (resting_count_ > 0) {
    uint32_t kept = 0, next_kept = 0;
    for (uint32_t k = 0; k < m(); ++k) {
      if (k == next) next_kept = kept;
      if (resting_[k]) {
        slot_[members_[k]] = -1;
        continue;
      }
      slot_[members_[k]] = static_cast<int32_t>(kept);
      members_[kept++] = members_[k];
    }
    members_.resize(kept);
    resting_.assign(kept, 0);
    resting_count_ = 0;
    next = next_kept;
  }
  cyclic_next_ = next;
  if (options_.order == Order::kShuffled) Reshuffle(), cyclic_next_ = 0;
}

void CoordinateScheduler::Reshuffle() {
  Shuffle(std::span<uint32_t>(members_), rng_);
  for (uint32_t k = 0; k < m(); ++k) slot_[members_[k]] = static_cast<int32_t>(k);
}

void CoordinateScheduler::Rebuild() {
  tree_.assign(size_t{m()} + 1, 0.0);
  for (size_t k = 1; k <= m(); ++k) {  // O(m): each node passes its sum to its parent
    tree_[k] += weight_[k - 1];
    const size_t parent = k + LowBit(k);
    if (parent <= m()) tree_[parent] += tree_[k];
  }
  updates_ = 0;
}

void CoordinateScheduler::SetWeight(uint32_t i, double w) {  // i: a slot
  if (weight_[i] == kUnvisited && w != kUnvisited) --unvisited_;
  const double change = w - weight_[i];
  weight_[i] = w;
  if (++updates_ > 4 * uint64_t{m()} || (unvisited_ == 0 && change < -kUnvisited / 2)) {
    // Rebuilt now and then: sums of many small changes drift, and the sweep's huge weights
    // must leave no trace.
    Rebuild();
    return;
  }
  Add(i, change);
}

void CoordinateScheduler::Add(uint32_t i, double change) {  // i: a slot
  for (size_t k = size_t{i} + 1; k <= m(); k += LowBit(k)) tree_[k] += change;
}

double CoordinateScheduler::Total() const {
  double sum = 0;
  for (size_t k = m(); k > 0; k -= LowBit(k)) sum += tree_[k];
  return sum;
}

uint32_t CoordinateScheduler::Find(double mass) const {
  size_t pos = 0;
  size_t step = 1;
  while (step * 2 <= m()) step *= 2;
  for (; step > 0; step /= 2) {
    if (pos + step <= m() && tree_[pos + step] <= mass) {
      pos += step;
      mass -= tree_[pos];
    }
  }
  return static_cast<uint32_t>(std::min<size_t>(pos, m() - 1));
}

const std::vector<uint32_t>& CoordinateScheduler::Candidates() {
  // A block of one is never refused (there is nothing taken for it to depend on): no spares.
  const uint64_t factor = options_.schedule_size == 1 ? 1 : options_.candidate_factor;
  const uint64_t want = std::min<uint64_t>(uint64_t{options_.schedule_size} * factor, working_set_size());
  std::vector<uint32_t>& out = candidates_;
  out.clear();
  if (sweeps()) {
    candidate_offsets_.clear();
    for (uint32_t k = 0; out.size() < want && k < m(); ++k) {
      const uint32_t at = (cyclic_next_ + k) % m();
      if (resting_[at]) continue;
      out.push_back(members_[at]);
      candidate_offsets_.push_back(k);
    }
    return out;
  }
  if (options_.order == Order::kRandom) {
    std::unordered_set<uint32_t> seen;
    while (out.size() < want) {
      const uint32_t j = members_[rng_.Below(m())];
      if (seen.insert(j).second) out.push_back(j);
    }
    return out;
  }
  // Priority: draw slots without replacement (drawn weights set aside, then put back).
  const uint64_t draws = want;
  if (draws == 1) {  // nothing to set aside
    const double total = Total();
    const uint32_t k = total > 0 ? FirstWeighted(Find(rng_.Uniform() * total)) : m();
    if (k < m()) out.push_back(members_[k]);
    return out;
  }
  std::vector<uint32_t>& slots = drawn_slots_;
  std::vector<double>& drawn = drawn_weights_;
  slots.clear();
  drawn.clear();
  while (slots.size() < draws) {
    const double total = Total();
    if (!(total > 0)) break;
    const uint32_t k = FirstWeighted(Find(rng_.Uniform() * total));
    if (k == m()) break;
    slots.push_back(k);
    drawn.push_back(weight_[k]);
    Add(k, -weight_[k]);
    weight_[k] = 0;
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    weight_[slots[i]] = drawn[i];
    Add(slots[i], drawn[i]);
    out.push_back(members_[slots[i]]);
  }
  return out;
}

uint32_t CoordinateScheduler::FirstWeighted(uint32_t k) const {
  if (weight_[k] != 0) return k;
  // Rounding put the draw on a set-aside slot (or the floor's): the first one left instead.
  return static_cast<uint32_t>(std::find_if(weight_.begin(), weight_.end(), [](double w) { return w > 0; }) -
                               weight_.begin());
}

const std::vector<uint32_t>& CoordinateScheduler::Select(
    std::span<const uint32_t> candidates, const std::function<double(size_t, size_t)>& dependency) {
  std::vector<uint32_t>& taken = taken_;
  std::vector<size_t>& positions = positions_;
  taken.clear();
  positions.clear();
  size_t last = 0;
  size_t first_dropped = candidates.size();
  for (size_t a = 0; a < candidates.size() && taken.size() < options_.schedule_size; ++a) {
    bool free = true;
    if (checks_dependencies()) {
      for (size_t b : positions) {
        if (dependency(a, b) > options_.dependency_threshold) {
          free = false;
          break;
        }
      }
    }
    if (!free) {
      first_dropped = std::min(first_dropped, a);
      continue;
    }
    taken.push_back(candidates[a]);
    positions.push_back(a);
    last = a;
  }
  // Cyclic order resumes at the first coordinate it had to leave out, so that one leads the next
  // round and is taken: every coordinate is updated once per sweep, whatever depends on what.
  if (sweeps() && !taken.empty()) {
    last_taken_ = taken.back();
    ++rounds_since_restrict_;
    const size_t resume = std::min(first_dropped, last + 1);
    const uint64_t next =
        uint64_t{cyclic_next_} +
        (resume < candidates.size() ? candidate_offsets_[resume] : candidate_offsets_[last] + 1);
    if (next >= m()) {
      EndSweep(static_cast<uint32_t>(next % m()));
    } else {
      cyclic_next_ = static_cast<uint32_t>(next);
    }
  }
  return taken;
}

void CoordinateScheduler::Report(uint32_t coordinate, double delta) {
  if (options_.order != Order::kPriority || slot_[coordinate] < 0) return;
  SetWeight(static_cast<uint32_t>(slot_[coordinate]), delta * delta + options_.priority_floor);
}

}  // namespace parasol::modelpar
