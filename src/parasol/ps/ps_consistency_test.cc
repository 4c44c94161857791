// The consistency models' guarantees, checked on every read while workers pause at random, one
// worker straggles and one rank's parameter-server messages are delayed in flight.
#include <string>

#include <gtest/gtest.h>

#include "parasol/comm/testing.h"
#include "parasol/ps/testing_workloads.h"

namespace parasol::ps {
namespace {

using comm::InProcessWorld;
using comm::MessageFault;
using namespace std::chrono_literals;

testing::CountingResult RunInProcess(const testing::CountingOptions& o, int ranks = 3, bool delay = true) {
  InProcessWorld world(ranks);
  if (delay) {
    // Rank 1's parameter-server messages (updates, clocks, replies) arrive late now and then;
    // order per sender is kept, as any real network keeps it.
    world.AddFault({.action = MessageFault::Action::kDelay,
                    .src = 1,
                    .tag_mask = ~0u,
                    .tag_value = kPsTag,
                    .skip = 5,
                    .count = 40,
                    .delay_ms = 3ms});
  }
  return testing::RunCountingRanks(world, o);
}

struct ModelCase {
  Consistency model;
  uint32_t staleness;
  double vap;
};

class EveryModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(EveryModel, ReadsRespectTheBoundAndNoUpdateIsLost) {
  auto [model, staleness, vap] = GetParam();
  testing::CountingOptions o{.model = model, .staleness = staleness, .vap_threshold = vap, .slow_worker = 3};
  auto r = RunInProcess(o);
  EXPECT_EQ(r.reads, static_cast<uint64_t>(3 * o.workers * o.clocks * o.rows));
}

INSTANTIATE_TEST_SUITE_P(
    Models, EveryModel,
    ::testing::Values(ModelCase{Consistency::kBsp, 0, 0}, ModelCase{Consistency::kSsp, 0, 0},
                      ModelCase{Consistency::kSsp, 1, 0}, ModelCase{Consistency::kSsp, 3, 0},
                      ModelCase{Consistency::kEssp, 2, 0}, ModelCase{Consistency::kVap, 2, 3.0},
                      ModelCase{Consistency::kAsp, 0, 0}),
    [](const auto& test) {
      std::string name(ConsistencyName(test.param.model));
      return name + std::to_string(test.param.staleness);
    });

// Rows read one-sided from the shards' memory obey the same bounds and show the process's own
// updates exactly once (the batches a row already holds are not added again), with rank 1's
// updates and clocks delayed so that rows change while others read them.
class OneSided : public ::testing::TestWithParam<ModelCase> {};

TEST_P(OneSided, ReadsRespectTheBoundAndNoUpdateIsLost) {
  auto [model, staleness, vap] = GetParam();
  testing::CountingOptions o{.model = model, .staleness = staleness, .slow_worker = 3, .one_sided = true};
  auto r = RunInProcess(o);
  EXPECT_EQ(r.reads, static_cast<uint64_t>(3 * o.workers * o.clocks * o.rows));
  EXPECT_EQ(r.stats.gets_sent, 0u) << "a one-sided table asked a shard for rows";
  EXPECT_GT(r.stats.one_sided_rows, 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, OneSided,
                         ::testing::Values(ModelCase{Consistency::kBsp, 0, 0},
                                           ModelCase{Consistency::kSsp, 0, 0},
                                           ModelCase{Consistency::kSsp, 1, 0},
                                           ModelCase{Consistency::kSsp, 3, 0}),
                         [](const auto& test) {
                           std::string name(ConsistencyName(test.param.model));
                           return name + std::to_string(test.param.staleness);
                         });

// Sparse rows obey the same rules.
TEST(Consistency, SparseRowsToo) {
  auto r = RunInProcess({.model = Consistency::kSsp, .staleness = 2, .kind = RowKind::kSparse});
  EXPECT_GT(r.reads, 0u);
}

}  // namespace
}  // namespace parasol::ps
