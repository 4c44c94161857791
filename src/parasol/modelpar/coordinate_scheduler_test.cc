#include "parasol/modelpar/coordinate_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "parasol/core/error.h"

namespace parasol::modelpar {
namespace {

TEST(CoordinateScheduler, CyclicResumesAfterTheLastTaken) {
  CoordinateScheduler s(
      10, {.order = Order::kCyclic, .schedule_size = 3, .candidate_factor = 2, .dependency_threshold = 1});
  auto none = [](size_t, size_t) { return 0.0; };
  std::vector<uint32_t> c = s.Candidates();
  EXPECT_EQ(c, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(s.Select(c, none), (std::vector<uint32_t>{0, 1, 2}));
  c = s.Candidates();
  EXPECT_EQ(s.Select(c, none), (std::vector<uint32_t>{3, 4, 5}));
  c = s.Candidates();
  EXPECT_EQ(s.Select(c, none), (std::vector<uint32_t>{6, 7, 8}));
  c = s.Candidates();
  EXPECT_EQ(s.Select(c, none), (std::vector<uint32_t>{9, 0, 1}));  // wraps around
}

// The dependency check drops a candidate coupled to one already taken, and the spares fill in.
TEST(CoordinateScheduler, DropsDependentCandidates) {
  CoordinateScheduler s(
      8, {.order = Order::kCyclic, .schedule_size = 3, .candidate_factor = 2, .dependency_threshold = 0.5});
  std::vector<uint32_t> c = s.Candidates();  // 0..5
  // 0 and 1 are coupled, as are 2 and 3; everything else is independent.
  auto dep = [&](size_t a, size_t b) {
    const std::set<uint32_t> pair{c[a], c[b]};
    return pair == std::set<uint32_t>{0, 1} || pair == std::set<uint32_t>{2, 3} ? 0.9 : 0.1;
  };
  EXPECT_EQ(s.Select(c, dep), (std::vector<uint32_t>{0, 2, 4}));
  // Cyclic order resumes at the first one left out (1), which leads the next round.
  EXPECT_EQ(s.Candidates().front(), 1u);
}

// Blocks of 20 mutually dependent coordinates, 32 candidates a round: every coordinate is still
// updated, each within two sweeps. (Resuming after the last taken skipped the same ones forever.)
TEST(CoordinateScheduler, CyclicWithDependenciesReachesEveryCoordinate) {
  const uint32_t n = 200;
  CoordinateScheduler s(
      n, {.order = Order::kCyclic, .schedule_size = 32, .candidate_factor = 1, .dependency_threshold = 0.1});
  std::vector<int> last_round(n, -1);
  for (int round = 0; round < 2 * static_cast<int>(n); ++round) {
    std::vector<uint32_t> c = s.Candidates();
    for (uint32_t j : s.Select(c, [&](size_t a, size_t b) { return c[a] / 20 == c[b] / 20 ? 0.9 : 0.0; })) {
      last_round[j] = round;
    }
  }
  for (uint32_t j = 0; j < n; ++j) EXPECT_GE(last_round[j], static_cast<int>(n) - 1) << "coordinate " << j;
}

// Restricted, cyclic order sweeps the working set in its order from its first, and random order
// draws only from it; an empty restriction brings every coordinate back.
TEST(CoordinateScheduler, CyclicAndRandomDrawFromTheWorkingSet) {
  const auto none = [](size_t, size_t) { return 0.0; };
  CoordinateScheduler cyclic(10, {.order = Order::kCyclic, .schedule_size = 2, .dependency_threshold = 1});
  cyclic.Candidates();
  cyclic.Select(cyclic.Candidates(), none);
  const std::vector<uint32_t> set{7, 2, 5};
  const std::vector<double> moves{1, 1, 1};
  cyclic.Restrict(set, moves);
  EXPECT_EQ(cyclic.working_set_size(), 3u);
  std::vector<uint32_t> c = cyclic.Candidates();
  EXPECT_EQ(cyclic.Select(c, none), (std::vector<uint32_t>{7, 2}));
  c = cyclic.Candidates();
  EXPECT_EQ(cyclic.Select(c, none), (std::vector<uint32_t>{5, 7}));  // wraps around the set
  cyclic.Restrict({}, {});
  c = cyclic.Candidates();
  EXPECT_EQ(cyclic.Select(c, none), (std::vector<uint32_t>{0, 1}));

  CoordinateScheduler random(1000, {.order = Order::kRandom, .schedule_size = 2, .seed = 3});
  random.Restrict(set, moves);
  std::set<uint32_t> drawn;
  for (int round = 0; round < 50; ++round) {
    for (uint32_t j : random.Candidates()) drawn.insert(j);
  }
  EXPECT_EQ(drawn, (std::set<uint32_t>{2, 5, 7}));
}

// Checks every round restrict the working set again and again: cyclic order goes on from the
// coordinate after the last one taken (it started from the set's first, so the same coordinate
// was updated forever: `--check-every 1` never converged). After a whole sweep, or with no round
// since the last Restrict, it starts from the set's first as before.
TEST(CoordinateScheduler, CyclicGoesOnAcrossRestrictsWithinASweep) {
  const auto none = [](size_t, size_t) { return 0.0; };
  CoordinateScheduler s(6, {.order = Order::kCyclic, .schedule_size = 1, .dependency_threshold = 1});
  auto round = [&] {
    std::vector<uint32_t> c = s.Candidates();
    return s.Select(c, none).at(0);
  };
  const std::vector<uint32_t> set{1, 3, 4};
  const std::vector<double> moves{1, 1, 1};
  std::vector<uint32_t> taken;
  for (int k = 0; k < 4; ++k) {
    s.Restrict(set, moves);
    taken.push_back(round());
  }
  EXPECT_EQ(taken, (std::vector<uint32_t>{1, 3, 4, 1}));
  s.Restrict(set, moves);
  s.Restrict(set, moves);  // no round since: from the first
  EXPECT_EQ(round(), 1u);
  EXPECT_EQ(round(), 3u);
  EXPECT_EQ(round(), 4u);  // a sweep ends
  EXPECT_EQ(round(), 1u);
  s.Restrict(set, moves);
  EXPECT_EQ(round(), 1u);
}

// A resting coordinate is skipped from the moment it rests, leaves the working set when the sweep
// ends (cyclic order keeps the others' order and resumes where it was), and comes back with the
// next Restrict. The last coordinate swept never rests, and priority order ignores resting.
TEST(CoordinateScheduler, RestingCoordinatesWaitForTheNextRestrict) {
  const auto none = [](size_t, size_t) { return 0.0; };
  CoordinateScheduler s(8, {.order = Order::kCyclic, .schedule_size = 2, .dependency_threshold = 1});
  auto round = [&] {
    std::vector<uint32_t> c = s.Candidates();
    return s.Select(c, none);
  };
  EXPECT_EQ(round(), (std::vector<uint32_t>{0, 1}));
  s.Rest(3);
  s.Rest(4);
  s.Rest(3);  // twice: one rest
  EXPECT_EQ(s.working_set_size(), 6u);
  EXPECT_EQ(round(), (std::vector<uint32_t>{2, 5}));
  s.Rest(0);
  EXPECT_EQ(round(), (std::vector<uint32_t>{6, 7}));  // the sweep ends: 0, 3 and 4 leave
  EXPECT_EQ(round(), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(round(), (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(s.working_set_size(), 5u);
  for (uint32_t j : {1, 2, 5, 6}) s.Rest(j);
  s.Rest(7);  // the last one swept stays
  EXPECT_EQ(s.working_set_size(), 1u);
  EXPECT_EQ(round(), (std::vector<uint32_t>{7}));
  EXPECT_EQ(round(), (std::vector<uint32_t>{7}));
  s.Restrict(std::vector<uint32_t>{4, 0}, std::vector<double>{1, 1});
  EXPECT_EQ(round(), (std::vector<uint32_t>{4, 0}));

  CoordinateScheduler priority(4, {.order = Order::kPriority, .schedule_size = 1, .seed = 2});
  priority.Restrict(std::vector<uint32_t>{1, 2}, std::vector<double>{1, 1});
  priority.Rest(1);
  EXPECT_EQ(priority.working_set_size(), 2u);
  std::set<uint32_t> drawn;
  for (int k = 0; k < 40; ++k) drawn.insert(priority.Candidates().at(0));
  EXPECT_EQ(drawn, (std::set<uint32_t>{1, 2}));
}

// Shuffled order visits each working-set coordinate once a sweep, as cyclic order does, but in an
// order drawn anew each sweep: over 200 sweeps of 4 coordinates every one of the 24 orders comes
// (a fixed order, or one drawn once, gives one), each about as often, and a seed repeats them.
TEST(CoordinateScheduler, ShuffledSweepsTheWorkingSetInFreshOrders) {
  const auto none = [](size_t, size_t) { return 0.0; };
  auto sweeps = [&](uint64_t seed) {
    CoordinateScheduler s(
        10, {.order = Order::kShuffled, .schedule_size = 1, .dependency_threshold = 1, .seed = seed});
    const std::vector<uint32_t> set{7, 2, 5, 9};
    s.Restrict(set, std::vector<double>(4, 1.0));
    EXPECT_EQ(s.working_set_size(), 4u);
    std::vector<std::vector<uint32_t>> orders;
    for (int sweep = 0; sweep < 240; ++sweep) {
      std::vector<uint32_t> order;
      for (int k = 0; k < 4; ++k) {
        std::vector<uint32_t> c = s.Candidates();
        const std::vector<uint32_t>& taken = s.Select(c, none);
        EXPECT_EQ(taken.size(), 1u);
        order.push_back(taken.at(0));
      }
      std::vector<uint32_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(sorted, (std::vector<uint32_t>{2, 5, 7, 9})) << "sweep " << sweep;
      orders.push_back(order);
    }
    return orders;
  };
  const auto orders = sweeps(4);
  std::map<std::vector<uint32_t>, int> count;
  for (const auto& o : orders) ++count[o];
  EXPECT_EQ(count.size(), 24u);
  for (const auto& [order, n] : count) EXPECT_LE(n, 25) << "an order came " << n << " times of 240";
  EXPECT_EQ(sweeps(4), orders);
  EXPECT_NE(sweeps(5), orders);
}

TEST(CoordinateScheduler, RandomDrawsDistinctCoordinates) {
  CoordinateScheduler s(50, {.order = Order::kRandom, .schedule_size = 10, .candidate_factor = 3, .seed = 9});
  std::map<uint32_t, int> seen;
  for (int round = 0; round < 200; ++round) {
    std::vector<uint32_t> c = s.Candidates();
    ASSERT_EQ(c.size(), 30u);
    EXPECT_EQ(std::set<uint32_t>(c.begin(), c.end()).size(), 30u);
    for (uint32_t j : c) ++seen[j];
  }
  EXPECT_EQ(seen.size(), 50u);
}

// Priority order visits every coordinate once, then draws in proportion to delta^2 + floor.
TEST(CoordinateScheduler, PriorityFavoursCoordinatesThatMove) {
  const uint32_t n = 1000;
  CoordinateScheduler s(n, {.order = Order::kPriority,
                            .schedule_size = 10,
                            .candidate_factor = 1,
                            .dependency_threshold = 1,
                            .priority_floor = 1e-6,
                            .seed = 4});
  std::set<uint32_t> first_sweep;
  for (int round = 0; round < 100; ++round) {
    std::vector<uint32_t> c = s.Candidates();
    ASSERT_EQ(c.size(), 10u);
    for (uint32_t j : c) {
      first_sweep.insert(j);
      s.Report(j, j % 100 == 7 ? 1.0 : 0.0);  // ten coordinates keep moving
    }
  }
  EXPECT_EQ(first_sweep.size(), n);  // 100 rounds of 10: each coordinate exactly once
  int moving = 0, draws = 0;
  for (int round = 0; round < 100; ++round) {
    for (uint32_t j : s.Candidates()) moving += j % 100 == 7, ++draws;
  }
  // Weight 10 x 1 against 990 x 1e-6: a draw of ten takes all ten movers nearly always.
  EXPECT_GT(moving, draws * 95 / 100);
  // After the movers stop, every coordinate is as likely as any other again.
  for (uint32_t j = 7; j < n; j += 100) s.Report(j, 0.0);
  std::set<uint32_t> later;
  for (int round = 0; round < 300; ++round) {
    for (uint32_t j : s.Candidates()) later.insert(j);
  }
  EXPECT_GT(later.size(), 900u);
}

TEST(CoordinateScheduler, RejectsBadOptions) {
  EXPECT_THROW(CoordinateScheduler(0, {}), InvalidArgumentError);
  EXPECT_THROW(CoordinateScheduler(5, {.schedule_size = 0}), InvalidArgumentError);
  EXPECT_THROW(CoordinateScheduler(5, {.dependency_threshold = -1}), InvalidArgumentError);
  EXPECT_THROW(ParseOrder("fifo"), InvalidArgumentError);
  EXPECT_EQ(ParseOrder("cyclic"), Order::kCyclic);
  EXPECT_EQ(ParseOrder("shuffled"), Order::kShuffled);
  EXPECT_EQ(OrderName(Order::kShuffled), "shuffled");
}

}  // namespace
}  // namespace parasol::modelpar
